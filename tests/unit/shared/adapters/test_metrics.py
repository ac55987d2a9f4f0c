"""What a stage process exports before any traffic, and the timing a published query carries."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prometheus_client import REGISTRY

from shared.adapters.kafka.broker import Bus
from shared.adapters.metrics import export_known_series, record_finished_query
from shared.model.delivery import Delivery
from shared.model.events import NodesSelected, QueryReceived, StageTiming
from shared.model.query import NavigationResult, TraversalStats


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_a_started_stage_exports_its_counters_at_zero_before_any_message() -> None:
    export_known_series("zerostage", consumed=["p.query.received"], produced=["p.nodes.selected"])

    assert sample("treerag_messages_consumed_total", stage="zerostage", topic="p.query.received") == 0
    assert sample("treerag_messages_published_total", stage="zerostage", topic="p.nodes.selected") == 0
    assert sample("treerag_dlq_messages_total", stage="zerostage", topic="p.query.received") == 0
    assert sample("treerag_failures_total", stage="zerostage", reason="invalid_event") == 0
    assert sample("treerag_handler_seconds_count", stage="zerostage") == 0
    for status in ("ready", "failed"):
        assert sample("treerag_documents_total", status=status) is not None
    assert sample("treerag_queries_total", outcome="timeout") is not None


def test_a_finished_query_is_counted_with_its_stage_times() -> None:
    before = sample("treerag_queries_total", outcome="abstained") or 0
    spent = sample("treerag_query_stage_seconds_sum", stage="compressor", phase="processing") or 0
    record_finished_query("abstained", [StageTiming(stage="compressor", queued_ms=4, processing_ms=250)])
    assert sample("treerag_queries_total", outcome="abstained") == before + 1
    after = sample("treerag_query_stage_seconds_sum", stage="compressor", phase="processing")
    assert after is not None and abs(after - spent - 0.25) < 1e-9


class RecordingBroker:
    """Takes what the bus publishes, after a delay like a broker's acknowledgement."""

    def __init__(self, ack_s: float) -> None:
        self.ack_s = ack_s
        self.sent: list[bytes] = []

    async def publish(self, payload: bytes, **_: Any) -> None:
        self.sent.append(payload)
        await asyncio.sleep(self.ack_s)


def test_the_published_timing_runs_from_receipt_to_the_send_and_the_ack_wait_is_measured_apart() -> None:
    received = time.perf_counter()
    query = QueryReceived(query_id="q1", question="?")
    delivery = Delivery("navigator", "query.received", 0, 7, 1, queued_ms=3.0, started=received - 0.05)
    timing = delivery.timing()  # taken by the handler before the rest of its work
    time.sleep(0.03)  # e.g. a store write after the timing was taken
    navigation = NavigationResult(question="?", mode="dfs", passages=[], stats=TraversalStats())
    event = NodesSelected(**{**query.carry(), "timings": [timing]}, navigation=navigation)
    publish_before = sample("treerag_publish_seconds_sum", stage="navigator") or 0

    # An acknowledgement far longer than the work, so a busy machine's scheduling delays cannot
    # be mistaken for it.
    bus = Bus(RecordingBroker(ack_s=0.5), "navigator")  # type: ignore[arg-type]
    asyncio.run(bus.publish(event))

    [payload] = bus.broker.sent  # type: ignore[attr-defined]
    [sent_timing] = NodesSelected.model_validate_json(payload).timings
    assert sent_timing.queued_ms == 3.0
    # 50 ms before the timing was taken, 30 ms after it, not the 500 ms acknowledgement.
    assert 80 <= sent_timing.processing_ms < 500
    assert (sample("treerag_publish_seconds_sum", stage="navigator") or 0) - publish_before >= 0.5


def test_an_earlier_stages_timing_is_passed_on_unchanged() -> None:
    earlier = StageTiming(stage="navigator", queued_ms=1.0, processing_ms=2.0)
    query = QueryReceived(query_id="q2", question="?")
    navigation = NavigationResult(question="?", mode="dfs", passages=[], stats=TraversalStats())
    event = NodesSelected(**{**query.carry(), "timings": [earlier]}, navigation=navigation)
    bus = Bus(RecordingBroker(ack_s=0), "compressor")  # type: ignore[arg-type]
    asyncio.run(bus.publish(event))
    [payload] = bus.broker.sent  # type: ignore[attr-defined]
    assert NodesSelected.model_validate_json(payload).timings == [earlier]
