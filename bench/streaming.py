"""Streamed answers over the bus: how soon the first event and the first sentence reach the client.

    python -m bench.streaming [--run-dir DIR]
    python -m bench.streaming --llm-base-url http://127.0.0.1:8765/v1 [--questions N]
    python -m bench.streaming --completions [--llm-base-url URL]

With `--llm-base-url` the verifier's answers are written by the model served there (`make
llm-local`: SmolLM2-135M-Instruct under llama.cpp; the other stages stay offline), and the
`draft` events (the answer as the model writes it) are timed too: when the first reaches the
client, against the first checked sentence and the end. Results then go to
bench/results/streaming_llm.json.

Starts the stack (Kafka, FerretDB, every stage, the gateway) on its own ports, indexes three R
manuals through it, then asks each of their answerable dev questions with `Accept:
text/event-stream`, one at a time. Per question, from the moment the request is sent: when the
`accepted`, `routed` and first `sentence` events arrive, and when the stream ends. The last
stage finishes when it sends the answer: the stream's `answer` carries the stages' timings, each
with the moment the stage received its message and how long it worked until its send, so the
first sentence's arrival (on the same clock) is compared with the verifier's send. Results go to
bench/results/streaming.json.

With `--completions` the same questions go through the OpenAI-compatible `POST
/v1/chat/completions` with `stream: true` instead (on a stack of its own, so no answer comes
from the cache): when the first content chunk arrives, against the stream's end; results in
bench/results/streaming_completions.json (streaming_llm_completions.json with a model).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from aiokafka import AIOKafkaConsumer, TopicPartition

from bench.common import configure_bench_logging, latency_summary, percentile, shared_data, write_result
from bench.stack import BusStack
from shared.model.events import AnswerVerified, QueryProgress

logger = logging.getLogger("bench.streaming")

MANUALS = ("R-intro.pdf", "R-data.pdf", "R-FAQ.pdf")


def _at(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


async def one(client: httpx.AsyncClient, question: str, doc_id: str) -> dict[str, Any]:
    started = time.perf_counter()
    sent_at = time.time()
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
    verifier = [s for s in stages if s["stage"] == "verifier" and s.get("started_at")]
    # The verifier's send, on the client's clock (same machine), from the request's start.
    verifier_sent_s = (_at(verifier[-1]["started_at"]) + verifier[-1]["processing_ms"] / 1000 - sent_at
                       if verifier else None)
    return {"query_id": final.get("query_id"), "accepted_s": seen.get("accepted"), "routed_s": seen.get("routed"),
            "first_draft_s": seen.get("draft"), "first_sentence_s": seen.get("sentence"),
            "end_s": time.perf_counter() - started, "abstained": bool(final.get("abstained")),
            "verifier_sent_s": verifier_sent_s, "sentences": len(final.get("sentences", []))}


async def one_completion(client: httpx.AsyncClient, question: str, doc_id: str) -> dict[str, Any]:
    """The same question through `POST /v1/chat/completions` with `stream: true`: when the first
    content chunk (the first checked sentence) arrives, and when the stream ends."""
    started = time.perf_counter()
    first: float | None = None
    pieces = 0
    body = {"model": f"treerag/{doc_id}", "stream": True, "messages": [{"role": "user", "content": question}]}
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line.removeprefix("data: ")).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                pieces += 1
                first = first if first is not None else time.perf_counter() - started
    return {"first_content_s": first, "end_s": time.perf_counter() - started, "pieces": pieces}


async def sent_times(bootstrap: str, topic: str) -> dict[bytes, list[tuple[int, bytes]]]:
    """Each query's messages on `topic` as (the producer's timestamp in ms, value), by key."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer._client.force_metadata_update()  # the topic's partitions, without joining a group
        partitions = [TopicPartition(topic, p) for p in (consumer.partitions_for_topic(topic) or set())]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        found: dict[bytes, list[tuple[int, bytes]]] = {}
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                for record in records:
                    found.setdefault(record.key or b"", []).append((record.timestamp, record.value or b""))
        return found
    finally:
        await consumer.stop()


async def verifier_lead(stack: BusStack, query_ids: list[str]) -> list[float]:
    """Per query, how long before its answer's send the verifier sent its first sentence (ms, on
    the broker's record timestamps): the part of the lead the transport does not eat."""
    progress = await sent_times(stack.kafka_bootstrap, QueryProgress.TOPIC)
    answers = await sent_times(stack.kafka_bootstrap, AnswerVerified.TOPIC)
    leads = []
    for query_id in query_ids:
        key = query_id.encode()
        firsts = [ts for ts, value in progress.get(key, []) if b'"step":"sentence"' in value]
        if firsts and answers.get(key):
            leads.append(float(answers[key][0][0] - min(firsts)))
    return leads


async def measure(stack: BusStack, items: list[dict[str, Any]], doc_ids: dict[str, str]) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        rows = [await one(client, item["question"], doc_ids[item["doc"]]) for item in items]
    leads = await verifier_lead(stack, [r["query_id"] for r in rows if r["query_id"]])
    first = [r["accepted_s"] for r in rows if r["accepted_s"] is not None]
    sentences = [r for r in rows if r["first_sentence_s"] is not None]
    compared = [r for r in sentences if r["verifier_sent_s"] is not None]
    ahead = [r["verifier_sent_s"] - r["first_sentence_s"] for r in compared]
    return {
        "questions": len(rows),
        "first_event": latency_summary(first),
        "routed": latency_summary([r["routed_s"] for r in rows if r["routed_s"] is not None]),
        "first_sentence": latency_summary([r["first_sentence_s"] for r in sentences]),
        "stream_end": latency_summary([r["end_s"] for r in rows]),
        "first_sentence_before_the_last_stage_finished": sum(a > 0 for a in ahead),
        "compared_with_the_verifiers_send": len(compared),
        "first_sentence_ahead_of_the_verifiers_send": latency_summary(ahead),
        "verifier_sent_first_sentence_before_its_answer_ms": {
            "n": len(leads), "p50": percentile(leads, 50) if leads else None,
            "min": min(leads) if leads else None, "max": max(leads) if leads else None},
        "answered_with_sentences": len(sentences),
        "abstained": sum(r["abstained"] for r in rows),
        "with_a_draft": sum(r["first_draft_s"] is not None for r in rows),
        "first_draft": latency_summary([r["first_draft_s"] for r in rows if r["first_draft_s"] is not None]),
        # How long before the stream's end the first draft and the first checked sentence came.
        "first_draft_before_the_end": latency_summary([r["end_s"] - r["first_draft_s"] for r in rows
                                                       if r["first_draft_s"] is not None]),
        "first_sentence_before_the_end": latency_summary([r["end_s"] - r["first_sentence_s"] for r in sentences]),
        # The questions whose first sentence came after the verifier's send: how many sentences
        # their answer has, and by how much it was late.
        "after_the_send": [{"sentences": r["sentences"], "late_ms": round((r["first_sentence_s"] - r["verifier_sent_s"]) * 1000, 2)}
                           for r in compared if r["first_sentence_s"] >= r["verifier_sent_s"]],
    }


async def measure_completions(stack: BusStack, items: list[dict[str, Any]], doc_ids: dict[str, str]) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        rows = [await one_completion(client, item["question"], doc_ids[item["doc"]]) for item in items]
    streamed = [r for r in rows if r["first_content_s"] is not None]
    return {
        "questions": len(rows),
        "with_content": len(streamed),
        "in_several_pieces": sum(r["pieces"] > 1 for r in streamed),
        "first_content": latency_summary([r["first_content_s"] for r in streamed]),
        "stream_end": latency_summary([r["end_s"] for r in rows]),
        # How long before the stream's end its first content came: the sentences sent as
        # they were checked, not after the answer.
        "first_content_before_the_end": latency_summary([r["end_s"] - r["first_content_s"] for r in streamed]),
    }


def main(argv: list[str] | None = None) -> int:
    from bench import bus_ingest

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench")
    parser.add_argument("--llm-base-url", help="the OpenAI-compatible server whose model writes the answers")
    parser.add_argument("--questions", type=int, default=0, help="ask only the first N questions (0: all)")
    parser.add_argument("--completions", action="store_true",
                        help="ask through the OpenAI-compatible stream instead (a stack of its own: no cached answer)")
    args = parser.parse_args(argv)
    configure_bench_logging()
    data = shared_data()
    files = [data / "pdfs" / "r-manuals" / name for name in MANUALS]
    items = [item for line in (data / "qa" / "r-manuals-dev.jsonl").read_text().splitlines() if line.strip()
             for item in [json.loads(line)] if item["doc"] in MANUALS and item.get("evidence_pages")]
    items = items[: args.questions] if args.questions else items
    stage_env = {}
    if args.llm_base_url:
        stage_env["verifier"] = {"TREERAG_LLM": "openai", "TREERAG_LLM_MODEL": "smollm2", "TREERAG_LLM_API_KEY": "local",
                                 "TREERAG_LLM_BASE_URL": args.llm_base_url, "TREERAG_LLM_TIMEOUT_S": "300",
                                 "TREERAG_LLM_CONTEXT_TOKENS": "4096"}  # the local server's window
    with bus_ingest.indexed_stack(args.run_dir, "streaming", files, stage_env) as (stack, doc_ids):
        result = asyncio.run((measure_completions if args.completions else measure)(stack, items, doc_ids))
    result["answers_written_by"] = "smollm2 (llama.cpp)" if args.llm_base_url else "the extractive answerer"
    name = "streaming_llm" if args.llm_base_url else "streaming"
    write_result(f"{name}_completions" if args.completions else name, result)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
