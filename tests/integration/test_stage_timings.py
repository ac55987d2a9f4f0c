"""The per-stage timings an answer reports account for each stage's whole handling.

A stage's `processing_ms` runs from the receipt of its message to the send of its output; what
its handler spends after that is the wait for the broker's acknowledgement
(`treerag_publish_seconds`) and, in the verifier, the answer cache's store write that runs beside
it (`treerag_cache_write_seconds`). Together they are the stage's `treerag_handler_seconds`.
"""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess, Stack
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

SUMS = ("treerag_handler_seconds_sum", "treerag_publish_seconds_sum")
CACHE_WRITES = "treerag_cache_write_seconds_sum"


def seconds_spent(process: ServiceProcess) -> dict[str, float]:
    text = httpx.get(f"http://127.0.0.1:{process.metrics_port}/metrics", timeout=10).text
    stage = process.name.rsplit("-", 1)[0]
    spent = dict.fromkeys((*SUMS, CACHE_WRITES), 0.0)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == CACHE_WRITES or (sample.name in SUMS and sample.labels.get("stage") == stage):
                spent[sample.name] += sample.value
    return spent


def test_answer_timings_plus_publish_waits_make_up_each_stages_handler_time(
    stack: Stack, gateway: Gateway, query_stages: list[ServiceProcess], indexer: ServiceProcess
) -> None:
    document = upload_ready(gateway, manual_pdf(unit=505), "unit-505.pdf")
    # A query of another test still in flight, or a process preempted between its send and its
    # metric, would blur the difference: a systematic gap shows on every attempt.
    for attempt in range(5):
        before = {p.name: seconds_spent(p) for p in query_stages}
        response = gateway.post("/v1/query", timeout=60, json={
            "question": f"When are the intake filters of unit 505 replaced? ({attempt})",
            "doc_ids": [document["doc_id"]]})
        assert response.status_code == 200, response.text
        reported = {t["stage"]: t for t in response.json()["timings"]["stages"]}
        problems = []
        for process in query_stages:
            after = seconds_spent(process)
            handler_ms, publish_ms, cache_write_ms = (
                (after[name] - before[process.name][name]) * 1000 for name in (*SUMS, CACHE_WRITES))
            processing_ms = reported[process.name.rsplit("-", 1)[0]]["processing_ms"]
            # What is left: logging and bookkeeping after the send, and the part of a cache write
            # that outlasts the send it runs beside (at most the whole write).
            unaccounted_ms = handler_ms - processing_ms - publish_ms
            if not -1.0 <= unaccounted_ms <= 3.0 + 0.1 * handler_ms + cache_write_ms:
                problems.append(f"{process.name}: handler {handler_ms:.1f} ms, reported {processing_ms:.1f} ms, "
                                f"publish {publish_ms:.1f} ms, cache write {cache_write_ms:.1f} ms")
        if not problems:
            return
    raise AssertionError("\n".join(problems))
