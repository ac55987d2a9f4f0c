"""Streamed answers over the bus: how soon the first event and the first sentence reach the client.

    python -m bench.streaming [--run-dir DIR]

Starts the stack (Kafka, FerretDB, every stage, the gateway) on its own ports, indexes three R
manuals through it, then asks each of their answerable dev questions with `Accept:
text/event-stream`, one at a time. Per question, from the moment the request is sent: when the
`accepted` event arrives, when the first `sentence` event arrives, and when the stream ends.
The last stage's own end is not seen by the client; the stream's `answer` carries the stages'
timings, so the first sentence is compared with the time the verifier finished (queue and
processing of every stage, summed). Results go to bench/results/streaming.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import configure_bench_logging, latency_summary, shared_data, write_result
from bench.stack import BusStack

logger = logging.getLogger("bench.streaming")

MANUALS = ("R-intro.pdf", "R-data.pdf", "R-FAQ.pdf")


async def one(client: httpx.AsyncClient, question: str, doc_id: str) -> dict[str, Any]:
    started = time.perf_counter()
    seen: dict[str, float] = {}
    final: dict[str, Any] = {}
    async with client.stream("POST", "/v1/query", json={"question": question, "doc_ids": [doc_id]},
                             headers={"Accept": "text/event-stream"}) as response:
        buffer = ""
        async for text in response.aiter_text():
            buffer += text
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                name = block.split("\n", 1)[0].removeprefix("event: ")
                seen.setdefault(name, time.perf_counter() - started)
                if name in ("answer", "error"):
                    final = json.loads(block.split("data: ", 1)[1])
    stages = final.get("timings", {}).get("stages", [])
    return {"accepted_s": seen.get("accepted"), "first_sentence_s": seen.get("sentence"),
            "end_s": time.perf_counter() - started,
            "stages_done_s": sum(s["queued_ms"] + s["processing_ms"] for s in stages) / 1000 if stages else None}


async def measure(stack: BusStack, items: list[dict[str, Any]], doc_ids: dict[str, str]) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        rows = [await one(client, item["question"], doc_ids[item["doc"]]) for item in items]
    first = [r["accepted_s"] for r in rows if r["accepted_s"] is not None]
    sentences = [r for r in rows if r["first_sentence_s"] is not None]
    before_last_stage = [r for r in sentences if r["stages_done_s"] is not None
                         and r["first_sentence_s"] < r["stages_done_s"]]
    return {
        "questions": len(rows),
        "first_event": latency_summary(first),
        "first_sentence": latency_summary([r["first_sentence_s"] for r in sentences]),
        "stream_end": latency_summary([r["end_s"] for r in rows]),
        "first_sentence_before_the_last_stage_finished": len(before_last_stage),
        "answered_with_sentences": len(sentences),
    }


def main(argv: list[str] | None = None) -> int:
    from bench import bus_ingest

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench")
    args = parser.parse_args(argv)
    configure_bench_logging()
    data = shared_data()
    files = [data / "pdfs" / "r-manuals" / name for name in MANUALS]
    items = [item for line in (data / "qa" / "r-manuals-dev.jsonl").read_text().splitlines() if line.strip()
             for item in [json.loads(line)] if item["doc"] in MANUALS and item.get("evidence_pages")]
    with bus_ingest.indexed_stack(args.run_dir, "streaming", files) as (stack, doc_ids):
        result = asyncio.run(measure(stack, items, doc_ids))
    write_result("streaming", result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
