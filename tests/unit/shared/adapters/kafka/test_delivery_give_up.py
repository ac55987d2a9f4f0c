"""When the delivery layer gives up on a message, and that giving up always ends the message.

The consumer runs against in-memory fakes of the ledger, the bus and the query store: these
tests are about the decisions (retry, dead-letter, report, commit), not the transport, which
tests/integration covers on the real Kafka and FerretDB.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client import REGISTRY

from shared.adapters.kafka.delivery import (
    DEAD_LETTER_PAYLOAD_MAX_BYTES,
    REASON_MAX_CHARS,
    RawMessage,
    ReliableConsumer,
)
from shared.adapters.memory.queries import InMemoryQueryStore
from shared.app.query_failures import report_query_failure
from shared.model.delivery import Delivery, Failure
from shared.model.events import DeadLetter, QueryFailed, QueryReceived
from shared.model.query_records import QueryRecord, QueryStatus
from tests.support.fakes import FakeLedger, RecordingPublisher

MAX_ATTEMPTS = 3
TOPIC = "query.received"


class Recorder:
    """A give-up hook that remembers what it was told, and can itself fail."""

    def __init__(self, fail_with: Exception | None = None) -> None:
        self.failures: list[Failure] = []
        self.fail_with = fail_with

    async def __call__(self, failure: Failure) -> None:
        self.failures.append(failure)
        if self.fail_with is not None:
            raise self.fail_with


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shared.adapters.kafka.delivery._backoff_seconds", lambda attempt: 0.0)


def consumer(handler: Any, give_up: Recorder, bus: RecordingPublisher, durable: bool = False) -> ReliableConsumer[Any]:
    ledger = FakeLedger()
    return ReliableConsumer(
        stage="verifier", group_id="g", event_type=QueryReceived, handler=handler, bus=bus,  # type: ignore[arg-type]
        ledger_factory=lambda: ledger, max_attempts=MAX_ATTEMPTS, give_up=give_up,  # type: ignore[arg-type,return-value]
        durable_attempts=durable,
    )


def message(event: QueryReceived | None = None, body: bytes | None = None, offset: int = 5) -> RawMessage:
    event = event or QueryReceived(query_id="q1", question="why?", deadline=datetime.now(UTC) + timedelta(minutes=1))
    return RawMessage(TOPIC, 0, offset, event.query_id, body if body is not None else event.model_dump_json().encode())


async def deliver_until_committed(consume: ReliableConsumer[Any], raw: RawMessage, limit: int = 10) -> int:
    """Deliver like Kafka does under NACK_ON_ERROR: again while the consumer raises. Returns
    the number of deliveries; fails when the message is still not committed after `limit`."""
    for delivery in range(1, limit + 1):
        try:
            await consume(raw)
        except Exception:
            continue
        return delivery
    raise AssertionError(f"message still redelivered after {limit} deliveries")


def failures_counted(reason: str) -> float:
    return REGISTRY.get_sample_value("treerag_failures_total", {"stage": "verifier", "reason": reason}) or 0.0


@pytest.mark.parametrize("durable", [False, True])
async def test_a_value_the_store_cannot_encode_is_given_up_at_once(durable: bool) -> None:
    calls: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        calls.append(delivery.attempt)
        raise OverflowError("MongoDB can only handle up to 8-byte ints")

    bus, gave_up = RecordingPublisher(), Recorder()
    assert await deliver_until_committed(consumer(handler, gave_up, bus, durable), message()) == 1
    assert calls == [1]
    [letter] = bus.letters()
    assert letter.attempts == 1 and letter.error_type == "OverflowError" and letter.key == "q1"
    [failure] = gave_up.failures
    assert (failure.key, failure.error_type, failure.stage) == ("q1", "OverflowError", "verifier")
    assert failure.decoded


@pytest.mark.parametrize("durable", [False, True])
async def test_a_failure_that_cannot_be_recorded_still_ends_the_message(durable: bool) -> None:
    # The original loop: the handler fails on the payload, then recording the failure fails too.
    calls: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        calls.append(delivery.attempt)
        raise RuntimeError("the answer insert failed")

    bus, gave_up = RecordingPublisher(), Recorder(fail_with=OverflowError("MongoDB can only handle up to 8-byte ints"))
    before = failures_counted("give_up_failed")
    deliveries = await deliver_until_committed(consumer(handler, gave_up, bus, durable), message())
    assert deliveries == MAX_ATTEMPTS and calls == [1, 2, 3]
    assert len(bus.letters()) == 1 and bus.letters()[0].attempts == MAX_ATTEMPTS
    assert len(gave_up.failures) == 1
    assert failures_counted("give_up_failed") == before + 1


async def test_an_expired_query_is_committed_and_reported_once_without_running() -> None:
    ran: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        ran.append(delivery.attempt)

    expired = QueryReceived(query_id="q2", question="why?", deadline=datetime.now(UTC) - timedelta(seconds=1))
    bus, gave_up = RecordingPublisher(), Recorder()
    assert await deliver_until_committed(consumer(handler, gave_up, bus), message(expired)) == 1
    assert ran == [] and not bus.raw
    assert [f.error_type for f in gave_up.failures] == ["DeadlineExpired"]

    # Recording it fails: still committed, and kept in the dead-letter topic instead.
    bus, gave_up = RecordingPublisher(), Recorder(fail_with=ConnectionError("store down"))
    assert await deliver_until_committed(consumer(handler, gave_up, bus), message(expired)) == 1
    assert ran == [] and [letter.error_type for letter in bus.letters()] == ["DeadlineExpired"]


async def test_a_handler_failing_past_the_deadline_is_not_retried() -> None:
    calls: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        calls.append(delivery.attempt)
        await asyncio.sleep(0.3)
        raise RuntimeError("slow and broken")

    soon = QueryReceived(query_id="q3", question="why?", deadline=datetime.now(UTC) + timedelta(seconds=0.2))
    bus, gave_up = RecordingPublisher(), Recorder()
    assert await deliver_until_committed(consumer(handler, gave_up, bus), message(soon)) == 1
    assert calls == [1]
    [failure] = gave_up.failures
    assert failure.error_type == "DeadlineExpired" and "slow and broken" in failure.reason


async def test_a_transient_failure_is_retried_up_to_the_limit_only() -> None:
    calls: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        calls.append(delivery.attempt)
        raise ConnectionError("page store unreachable")

    bus, gave_up = RecordingPublisher(), Recorder()
    assert await deliver_until_committed(consumer(handler, gave_up, bus), message()) == MAX_ATTEMPTS
    assert calls == [1, 2, 3] and len(bus.letters()) == 1 and len(gave_up.failures) == 1


@pytest.mark.parametrize("settings", [
    {"beam_width": 2**63}, {"token_budget": -1}, {"semantic_weight": float("inf")}, {"beam_width": "5"},
])
async def test_a_message_with_hostile_settings_is_dead_lettered_and_its_query_failed(settings: dict[str, Any]) -> None:
    ran: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        ran.append(delivery.attempt)

    body = json.loads(message().body)
    body["settings"] = settings
    raw = message(body=json.dumps(body).encode())  # json.dumps writes inf as Infinity, like a client can
    bus, gave_up = RecordingPublisher(), Recorder()
    assert await deliver_until_committed(consumer(handler, gave_up, bus), raw) == 1
    assert ran == []
    [letter] = bus.letters()
    assert letter.error_type == "ValidationError" and letter.attempts == 1
    [failure] = gave_up.failures
    assert failure.key == "q1" and failure.error_type == "ValidationError" and not failure.decoded


async def test_reasons_and_dead_letters_stay_small_whatever_the_message() -> None:
    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        raise AssertionError("not run")

    huge = json.dumps({"query_id": "q4", "question": "x" * 3_000_000}).encode()
    bus, gave_up = RecordingPublisher(), Recorder()
    await deliver_until_committed(consumer(handler, gave_up, bus), message(body=huge))
    [(_, payload, _)] = bus.raw
    letter = DeadLetter.model_validate_json(payload)
    assert letter.payload_truncated and len(payload) < DEAD_LETTER_PAYLOAD_MAX_BYTES + 10_000
    assert len(gave_up.failures[0].reason) <= REASON_MAX_CHARS + 40


class UnwritableQueryStore(InMemoryQueryStore):
    async def mark_failed(self, query_id: str, stage: str, reason: str, *, tenant: str = "default") -> bool:
        raise ConnectionError("store down")


def failure(key: str | None = "q5") -> Failure:
    return Failure("verifier", "context.compressed", key, "OverflowError", "int too big", 1, tenant="acme",
                   deadline=datetime.now(UTC) + timedelta(seconds=30))


async def test_a_query_fails_once_by_ids_and_the_client_is_told_once() -> None:
    bus, queries = RecordingPublisher(), InMemoryQueryStore()
    await queries.create(QueryRecord(query_id="q5", question="How big?", doc_ids=["d1"]))
    await report_query_failure(bus, queries, failure())
    await report_query_failure(bus, queries, failure())  # a second stage, a redelivery
    [event] = bus.events
    assert isinstance(event, QueryFailed)
    assert (event.query_id, event.stage, event.reason, event.tenant) == ("q5", "verifier", "int too big", "acme")
    assert event.question == "" and event.settings == type(event.settings)()  # ids only, never the payload
    stored = queries.results["q5"]
    assert (stored.status, stored.failed_stage, stored.question, stored.tenant) == (
        QueryStatus.FAILED, "verifier", "", "acme")
    read = await queries.get("q5")  # completed with what the client asked
    assert read is not None and (read.question, read.doc_ids, read.status) == ("How big?", ["d1"], QueryStatus.FAILED)


async def test_the_client_is_told_even_when_the_failure_cannot_be_stored() -> None:
    bus = RecordingPublisher()
    with pytest.raises(ConnectionError):
        await report_query_failure(bus, UnwritableQueryStore(), failure())
    assert [e.query_id for e in bus.events] == ["q5"]  # type: ignore[attr-defined]
    await report_query_failure(bus, UnwritableQueryStore(), failure(key=None))
    assert len(bus.events) == 1
