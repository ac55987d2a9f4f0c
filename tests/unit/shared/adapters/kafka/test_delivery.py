"""The delivery decisions (commit, retry, dead-letter, expire) over in-memory ledger and publisher."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from shared.adapters.kafka.delivery import RawMessage, ReliableConsumer
from shared.model.clock import utc_now
from shared.model.delivery import Delivery, Failure, PermanentError
from shared.model.events import DeadLetter, QueryReceived
from tests.support.fakes import FakeLedger, RecordingPublisher

MAX_ATTEMPTS = 3
BOTH_MODES = pytest.mark.parametrize("durable_attempts", [True, False], ids=["durable", "counting-failures"])


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    # The backoff is a wait, not a decision: the tests check what happens, not how long it takes.
    monkeypatch.setattr("shared.adapters.kafka.delivery._backoff_seconds", lambda attempt: 0.0)


def message(event: QueryReceived | None = None, offset: int = 7, body: bytes | None = None) -> RawMessage:
    event = event or QueryReceived(query_id="q1", question="why?", deadline=utc_now() + timedelta(minutes=1))
    return RawMessage("query.received", 2, offset, "q1", body if body is not None else event.model_dump_json().encode())


class Stage:
    """A handler that fails as told, the give-up reports it received, and the consumer around them."""

    def __init__(self, *, fail_with: Exception | None = None, fail_times: int = 0, durable_attempts: bool = True,
                 ledger: FakeLedger | None = None) -> None:
        self.ledger = ledger or FakeLedger()
        self.bus = RecordingPublisher()
        self.attempts: list[int] = []
        self.gave_up: list[tuple[str, str]] = []
        self.failures: list[Failure] = []
        self.fail_with = fail_with
        self.fail_times = fail_times
        self.consume: ReliableConsumer[Any] = ReliableConsumer(
            stage="navigator", group_id="g", event_type=QueryReceived, handler=self.handle, bus=self.bus,
            ledger_factory=lambda: self.ledger, max_attempts=MAX_ATTEMPTS, give_up=self.give_up,
            durable_attempts=durable_attempts,
        )

    async def handle(self, event: QueryReceived, delivery: Delivery) -> None:
        self.attempts.append(delivery.attempt)
        if self.fail_with is not None and len(self.attempts) <= self.fail_times:
            raise self.fail_with

    async def give_up(self, failure: Failure) -> None:
        self.failures.append(failure)
        self.gave_up.append((failure.error_type, failure.reason))

    def letters(self) -> list[DeadLetter]:
        assert all(topic == "query.received.dlq" for topic, _, _ in self.bus.raw)
        return self.bus.letters()


@BOTH_MODES
async def test_a_handled_message_is_committed_and_leaves_no_count(durable_attempts: bool) -> None:
    stage = Stage(durable_attempts=durable_attempts)

    await stage.consume(message())

    assert stage.attempts == [1]
    assert not stage.bus.raw and not stage.gave_up
    assert not stage.ledger.attempts


@BOTH_MODES
async def test_a_failure_with_attempts_left_is_retried(durable_attempts: bool) -> None:
    stage = Stage(fail_with=RuntimeError("store down"), fail_times=1, durable_attempts=durable_attempts)

    with pytest.raises(RuntimeError):  # raising rewinds the offset: Kafka delivers it again
        await stage.consume(message())
    await stage.consume(message())

    assert stage.attempts == [1, 2]
    assert not stage.bus.raw and not stage.gave_up
    assert not stage.ledger.attempts  # handled: the count is cleared


@BOTH_MODES
async def test_the_last_failure_dead_letters_and_gives_up_once(durable_attempts: bool) -> None:
    stage = Stage(fail_with=RuntimeError("store down"), fail_times=99, durable_attempts=durable_attempts)
    raw = message()

    for _ in range(MAX_ATTEMPTS - 1):
        with pytest.raises(RuntimeError):
            await stage.consume(raw)
    await stage.consume(raw)  # returns: the message is committed

    assert stage.attempts == [1, 2, 3]
    [letter] = stage.letters()
    assert (letter.attempts, letter.error, letter.error_type) == (MAX_ATTEMPTS, "store down", "RuntimeError")
    assert (letter.topic, letter.partition, letter.offset, letter.key) == ("query.received", 2, 7, "q1")
    assert QueryReceived.model_validate_json(letter.payload).query_id == "q1"
    assert stage.gave_up == [("RuntimeError", "store down")]
    [failure] = stage.failures
    assert (failure.key, failure.attempts, failure.stage) == ("q1", MAX_ATTEMPTS, "navigator")
    assert not stage.ledger.attempts


@BOTH_MODES
async def test_a_permanent_error_dead_letters_at_once(durable_attempts: bool) -> None:
    stage = Stage(fail_with=PermanentError("the PDF bytes are gone"), fail_times=99, durable_attempts=durable_attempts)

    await stage.consume(message())

    assert stage.attempts == [1]
    [letter] = stage.letters()
    assert letter.attempts == 1 and letter.error_type == "PermanentError"
    assert stage.gave_up == [("PermanentError", "the PDF bytes are gone")]


@BOTH_MODES
async def test_an_expired_query_is_not_run_and_is_reported_failed(durable_attempts: bool) -> None:
    stage = Stage(durable_attempts=durable_attempts)
    expired = QueryReceived(query_id="q1", question="why?", deadline=utc_now() - timedelta(seconds=1))

    await stage.consume(message(expired))

    assert stage.attempts == []
    [(error_type, reason)] = stage.gave_up
    assert error_type == "DeadlineExpired" and "expired" in reason


async def test_an_invalid_message_is_dead_lettered_without_running_the_handler() -> None:
    stage = Stage()

    await stage.consume(message(body=b'{"query_id": 5}'))

    assert stage.attempts == []
    [letter] = stage.letters()
    assert letter.error_type == "ValidationError" and "QueryReceived" in letter.error


async def test_a_message_whose_process_died_on_every_attempt_is_dead_lettered_unrun() -> None:
    ledger = FakeLedger()
    raw = message()
    for _ in range(MAX_ATTEMPTS):  # each attempt counted, then the process died mid-handler
        await ledger.begin_attempt("g", raw.topic, raw.partition, raw.offset)
    stage = Stage(ledger=ledger, durable_attempts=True)

    await stage.consume(raw)

    assert stage.attempts == []
    [letter] = stage.letters()
    assert letter.error_type == "ProcessDied" and letter.attempts == MAX_ATTEMPTS
    assert [t for t, _ in stage.gave_up] == ["ProcessDied"]
    assert not ledger.attempts


async def test_failures_counted_by_one_replica_count_for_the_next() -> None:
    ledger = FakeLedger()
    raw = message()
    first = Stage(fail_with=RuntimeError("store down"), fail_times=99, durable_attempts=False, ledger=ledger)
    for _ in range(MAX_ATTEMPTS - 1):
        with pytest.raises(RuntimeError):
            await first.consume(raw)

    # A rebalance hands the partition to another process, with nothing in memory.
    second = Stage(fail_with=RuntimeError("store down"), fail_times=99, durable_attempts=False, ledger=ledger)
    await second.consume(raw)

    assert second.attempts == [1]
    [letter] = second.letters()
    assert letter.attempts == MAX_ATTEMPTS
    assert len(second.gave_up) == 1 and not first.gave_up


async def test_an_unreadable_message_is_reported_without_its_body() -> None:
    stage = Stage()

    await stage.consume(message(body=b'{"query_id": "q1", "question": 5}'))

    assert stage.attempts == []
    [failure] = stage.failures
    assert failure.error_type == "ValidationError" and not failure.decoded
