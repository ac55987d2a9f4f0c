"""Attempt counting and dead-lettering, with the delivery ledger on the real FerretDB."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.adapters.kafka.delivery import (
    Delivery,
    PermanentError,
    RawMessage,
    ReliableConsumer,
)
from shared.adapters.mongo.ledger import DeliveryLedger
from shared.adapters.mongo.store import connect
from shared.model.delivery import Failure
from shared.model.events import DeadLetter, QueryReceived

pytestmark = pytest.mark.integration

MAX_ATTEMPTS = 3


class RecordingBus:
    """Stands in for the Kafka publisher: this test is about the decisions, not the transport."""

    def __init__(self) -> None:
        self.raw: list[tuple[str, bytes, str | None]] = []

    async def publish_raw(self, topic: str, payload: bytes, key: str | None) -> None:
        self.raw.append((topic, payload, key))


@pytest.fixture
async def ledger(infra: Any) -> AsyncIterator[DeliveryLedger]:
    client = connect(infra.mongo_url)
    db = client[f"ledger_{uuid.uuid4().hex[:8]}"]
    ledger = DeliveryLedger(db)
    await ledger.ensure_indexes()
    yield ledger
    await client.drop_database(db.name)
    await client.close()


def message(offset: int = 7) -> RawMessage:
    event = QueryReceived(query_id="q1", question="why?")
    return RawMessage("query.received", 2, offset, "q1", event.model_dump_json().encode())


def consumer(ledger: DeliveryLedger, bus: RecordingBus, handler: Any, gave_up: list[str],
             durable_attempts: bool = True) -> ReliableConsumer[Any]:
    async def give_up(failure: Failure) -> None:
        gave_up.append(f"{failure.error_type}: {failure.reason}")

    return ReliableConsumer(
        stage="navigator", group_id="g", event_type=QueryReceived, handler=handler, bus=bus,  # type: ignore[arg-type]
        ledger_factory=lambda: ledger, max_attempts=MAX_ATTEMPTS, give_up=give_up,
        durable_attempts=durable_attempts,
    )


async def test_a_failing_handler_is_retried_then_dead_lettered(ledger: DeliveryLedger,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shared.adapters.kafka.delivery._backoff_seconds", lambda attempt: 0.0)
    attempts: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        attempts.append(delivery.attempt)
        raise RuntimeError("the page store is down")

    bus, gave_up = RecordingBus(), []
    consume = consumer(ledger, bus, handler, gave_up)
    for _ in range(MAX_ATTEMPTS - 1):
        # Raising makes the subscriber rewind the offset: Kafka delivers the message again.
        with pytest.raises(RuntimeError):
            await consume(message())
        assert not bus.raw
    await consume(message())  # the last attempt: dead-lettered and acknowledged

    assert attempts == [1, 2, 3]
    [(topic, payload, key)] = bus.raw
    letter = DeadLetter.model_validate_json(payload)
    assert topic == "query.received.dlq" and key == "q1"
    assert letter.attempts == MAX_ATTEMPTS and letter.error == "the page store is down"
    assert letter.offset == 7 and letter.partition == 2
    assert gave_up == ["RuntimeError: the page store is down"]
    assert await ledger.attempts.count_documents({}) == 0


async def test_a_message_that_kills_its_process_is_dead_lettered_without_running_again(
    ledger: DeliveryLedger,
) -> None:
    # Three deliveries started and never finished: the process died each time.
    for _ in range(MAX_ATTEMPTS):
        await ledger.begin_attempt("g", "query.received", 2, 8)
    ran: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        ran.append(delivery.attempt)

    bus, gave_up = RecordingBus(), []
    await consumer(ledger, bus, handler, gave_up)(message(offset=8))
    assert ran == []
    assert DeadLetter.model_validate_json(bus.raw[0][1]).error_type == "ProcessDied"
    assert gave_up and "stopped 3 times" in gave_up[0]


async def test_a_permanent_error_is_not_retried(ledger: DeliveryLedger) -> None:
    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        raise PermanentError("document deleted")

    bus, gave_up = RecordingBus(), []
    await consumer(ledger, bus, handler, gave_up)(message(offset=9))
    assert len(bus.raw) == 1 and gave_up == ["PermanentError: document deleted"]


async def test_success_clears_the_attempts_and_done_markers_skip_repeats(ledger: DeliveryLedger) -> None:
    calls: list[str] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        if await ledger.is_done("navigator", event.query_id):
            return
        calls.append(event.query_id)
        await ledger.mark_done("navigator", event.query_id)

    bus, gave_up = RecordingBus(), []
    consume = consumer(ledger, bus, handler, gave_up)
    await consume(message(offset=10))
    await consume(message(offset=11))  # the same query delivered again
    assert calls == ["q1"] and not bus.raw and not gave_up
    assert await ledger.attempts.count_documents({}) == 0


async def test_counting_only_failures_writes_nothing_on_success(ledger: DeliveryLedger) -> None:
    seen: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        seen.append(delivery.attempt)
        assert await ledger.attempts.count_documents({}) == 0  # nothing written before the work

    bus, gave_up = RecordingBus(), []
    await consumer(ledger, bus, handler, gave_up, durable_attempts=False)(message(offset=20))
    assert seen == [1] and not bus.raw and not gave_up
    assert await ledger.attempts.count_documents({}) == 0


async def test_failures_are_counted_across_replicas_then_dead_lettered(ledger: DeliveryLedger,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shared.adapters.kafka.delivery._backoff_seconds", lambda attempt: 0.0)

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        raise RuntimeError("the page store is down")

    bus, gave_up = RecordingBus(), []
    first = consumer(ledger, bus, handler, gave_up, durable_attempts=False)
    with pytest.raises(RuntimeError):
        await first(message(offset=21))
    # The partition moves to another replica, which knows nothing of the first failure.
    second = consumer(ledger, bus, handler, gave_up, durable_attempts=False)
    with pytest.raises(RuntimeError):
        await second(message(offset=21))
    await second(message(offset=21))
    [(topic, payload, _)] = bus.raw
    assert topic == "query.received.dlq" and DeadLetter.model_validate_json(payload).attempts == MAX_ATTEMPTS
    assert gave_up == ["RuntimeError: the page store is down"]
    assert await ledger.attempts.count_documents({}) == 0


async def test_a_retry_that_succeeds_clears_the_failure_count(ledger: DeliveryLedger,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shared.adapters.kafka.delivery._backoff_seconds", lambda attempt: 0.0)
    attempts: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        attempts.append(delivery.attempt)
        if len(attempts) == 1:
            raise RuntimeError("blip")

    bus, gave_up = RecordingBus(), []
    consume = consumer(ledger, bus, handler, gave_up, durable_attempts=False)
    with pytest.raises(RuntimeError):
        await consume(message(offset=22))
    assert await ledger.attempts.count_documents({}) == 1
    await consume(message(offset=22))
    assert attempts == [1, 2] and not bus.raw and not gave_up
    assert await ledger.attempts.count_documents({}) == 0


async def test_an_expired_query_is_dropped_and_reported_without_running(ledger: DeliveryLedger) -> None:
    ran: list[int] = []

    async def handler(event: QueryReceived, delivery: Delivery) -> None:
        ran.append(delivery.attempt)

    bus, gave_up = RecordingBus(), []
    expired = QueryReceived(query_id="q9", question="why?", deadline=datetime.now(UTC) - timedelta(seconds=1))
    raw = RawMessage("query.received", 0, 30, "q9", expired.model_dump_json().encode())
    await consumer(ledger, bus, handler, gave_up, durable_attempts=False)(raw)
    assert ran == [] and not bus.raw  # not a dead letter: nothing is wrong with the message
    assert len(gave_up) == 1 and gave_up[0].startswith("DeadlineExpired: the query expired")

    live = QueryReceived(query_id="q10", question="why?", deadline=datetime.now(UTC) + timedelta(seconds=30))
    raw = RawMessage("query.received", 0, 31, "q10", live.model_dump_json().encode())
    await consumer(ledger, bus, handler, gave_up, durable_attempts=False)(raw)
    assert ran == [1]
