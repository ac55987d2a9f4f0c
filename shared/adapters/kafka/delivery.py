"""At-least-once consumption: attempts, retries, dead-lettering, metrics and correlated logs.

The subscriber runs with `AckPolicy.NACK_ON_ERROR`: the offset is committed when the handler
returns (after it stored and published its output) and rewound when it raises, so the message
is delivered again. `consume_reliably` decides which of the two happens:

- the handler succeeds -> commit;
- it raises and attempts remain -> back off, raise -> redelivery;
- the message does not validate as its event (a bound exceeded, a wrong type), the handler
  raises an error that retrying cannot cure (`PERMANENT_ERRORS`: a `PermanentError`, a value
  the store cannot encode...), the last attempt fails, or the process died during the previous
  attempts -> the message goes to `<topic>.dlq` with the error, the stage's `give_up` hook
  reports the failure to the user (document or query marked failed), and it is committed;
- a query event whose deadline has passed (its client has stopped waiting) is never run or
  retried: the query is marked failed and the message committed, so an overload drains
  instead of piling up.

The give-up hook gets a `Failure` (ids, stage, a truncated reason), never the message: what
failed the handler cannot fail the report. When the report fails anyway (the store is down),
the failure is logged and counted, the message stays in the dead-letter topic and is
committed: a message is never redelivered because its failure could not be recorded.

Attempts are counted in one of two ways. `durable_attempts` (the indexer: a message takes
seconds to minutes, so two ledger writes are nothing) records every attempt in MongoDB before
the handler runs, so a message that kills its process is counted too. The query stages
(milliseconds per message) write nothing on the happy path: a failure is counted in MongoDB when
it happens, so the DLQ-after-N-failures rule holds across restarts and replicas; a message that
kills its process is retried until its deadline passes, then dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from bson.errors import InvalidDocument
from pydantic import ValidationError
from pymongo.errors import DocumentTooLarge

from shared.adapters.logs import correlated, log_fields
from shared.adapters.metrics import (
    DLQ_MESSAGES,
    FAILURES,
    MESSAGES_CONSUMED,
    QUEUE_SECONDS,
)
from shared.model.delivery import Delivery, Failure, PermanentError
from shared.model.events import (
    DeadLetter,
    DocumentEvent,
    Event,
    QueryEvent,
    dlq_topic,
)
from shared.ports.bus import RawPublisher
from shared.ports.ledger import AttemptLedger
from shared.stage import GiveUp

logger = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)

LEDGER_RETRY_S = 2.0
# Reasons are stored and logged: an error that quotes its input must not carry it along whole.
REASON_MAX_CHARS = 500
# The start of the original message kept in a dead letter; Kafka refuses messages over ~1 MB.
DEAD_LETTER_PAYLOAD_MAX_BYTES = 256 * 1024


# The same message fails the same way every time: an event a stage builds that does not
# validate, an integer or document MongoDB cannot encode.
PERMANENT_ERRORS: tuple[type[Exception], ...] = (
    PermanentError, ValidationError, OverflowError, InvalidDocument, DocumentTooLarge,
)


def truncated(text: str, limit: int = REASON_MAX_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


Handler = Callable[[E, Delivery], Awaitable[None]]


@dataclass
class RawMessage:
    topic: str
    partition: int
    offset: int
    key: str | None
    body: bytes
    # When the consumer received it: a stage's handling time runs from here (decoding included).
    received: float = field(default_factory=time.perf_counter)


def _correlation(event: Event) -> dict[str, str]:
    ids = {"event_id": event.event_id}
    if isinstance(event, DocumentEvent):
        ids["doc_id"] = event.doc_id
    if isinstance(event, QueryEvent):
        ids["query_id"] = event.query_id
    return ids


def _backoff_seconds(attempt: int) -> float:
    return min(0.25 * 2 ** (attempt - 1), 5.0)


MAX_KEY_CHARS = 128  # a longer Kafka key is not one of our ids


def _key_of(raw: RawMessage) -> str | None:
    return raw.key if raw.key and len(raw.key) <= MAX_KEY_CHARS else None


@dataclass
class ReliableConsumer(Generic[E]):
    stage: str
    group_id: str
    event_type: type[E]
    handler: Handler[E]
    bus: RawPublisher
    ledger_factory: Callable[[], AttemptLedger]
    max_attempts: int
    give_up: GiveUp | None = None
    durable_attempts: bool = True
    # Failures seen by this process per (topic, partition, offset): only messages that failed.
    _failures: dict[tuple[str, int, int], int] = field(default_factory=dict)

    async def __call__(self, raw: RawMessage) -> None:
        MESSAGES_CONSUMED.labels(self.stage, raw.topic).inc()
        try:
            event = self.event_type.model_validate_json(raw.body)
        except ValidationError as exc:
            # Out of bounds or malformed: it cannot get better by retrying.
            FAILURES.labels(self.stage, "invalid_event").inc()
            reason = truncated(f"not a valid {self.event_type.__name__}: {exc}")
            with correlated(stage=self.stage, key=_key_of(raw)):
                await self._give_up(raw, None, 1, reason, "ValidationError")
            return
        queued_s = event.age_seconds()
        QUEUE_SECONDS.labels(self.stage).observe(queued_s)
        with correlated(stage=self.stage, **_correlation(event)):
            if isinstance(event, QueryEvent) and event.expired():
                await self._expire(raw, event)
                return
            if self.durable_attempts:
                await self._handle(raw, event, queued_s * 1000)
            else:
                await self._handle_counting_failures(raw, event, queued_s * 1000)

    def _failure(self, raw: RawMessage, event: Event | None, attempts: int, reason: str, error_type: str) -> Failure:
        if event is None:
            return Failure(self.stage, raw.topic, _key_of(raw), error_type, truncated(reason), attempts, decoded=False)
        query = event if isinstance(event, QueryEvent) else None
        return Failure(
            self.stage, raw.topic, event.key, error_type, truncated(reason), attempts, tenant=event.tenant,
            deadline=query.deadline if query else None, timings=tuple(query.timings) if query else (),
        )

    async def _expire(self, raw: RawMessage, event: QueryEvent, last_error: str | None = None) -> None:
        """Past its deadline a query is answered by nobody: report it failed once and commit.
        `last_error`: the handler failed on it and the deadline passed before a retry."""
        FAILURES.labels(self.stage, "deadline_expired").inc()
        self._failures.pop((raw.topic, raw.partition, raw.offset), None)
        deadline = event.deadline.isoformat() if event.deadline else "?"
        if last_error is None:
            logger.warning("query expired before this stage; dropped", extra=log_fields(deadline=deadline))
            reason = (f"the query expired (deadline {deadline}) before the {self.stage} stage could handle it; "
                      "the services are overloaded: ask again later or raise timeout_s")
        else:
            logger.warning("handler failed after the deadline; not retried",
                           extra=log_fields(deadline=deadline, error=last_error))
            reason = (f"the {self.stage} stage failed ({last_error}) and the query's deadline ({deadline}) "
                      "passed before it could try again: ask again later or raise timeout_s")
        failure = self._failure(raw, event, 0, reason, "DeadlineExpired")
        if not await self._report(failure):
            # Not recorded anywhere else: keep it where an operator looks.
            await self._dead_letter(raw, 0, reason, "DeadlineExpired")

    async def _handle_counting_failures(self, raw: RawMessage, event: E, queued_ms: float) -> None:
        message = (raw.topic, raw.partition, raw.offset)
        ledger = self.ledger_factory()
        attempt = self._failures.get(message, 0) + 1
        delivery = Delivery(self.stage, raw.topic, raw.partition, raw.offset, attempt, queued_ms, raw.received)
        try:
            await self.handler(event, delivery)
        except Exception as exc:
            FAILURES.labels(self.stage, type(exc).__name__).inc()
            try:
                # Counted in MongoDB too: another replica or a restarted process goes on counting.
                failures = max(attempt, await ledger.begin_attempt(self.group_id, *message))
            except Exception as ledger_exc:
                logger.warning("delivery ledger unavailable; counting in memory",
                               extra=log_fields(error=repr(ledger_exc)))
                failures = attempt
            self._failures[message] = failures
            if await self._gave_up_after(raw, event, exc, failures):
                await self._forget(ledger, message)
                return
            raise
        if message in self._failures:
            await self._forget(ledger, message)

    async def _gave_up_after(self, raw: RawMessage, event: E, exc: Exception, attempts: int) -> bool:
        """After a failed attempt: end the message (dead letter and failure report, or the
        deadline report) and return True when it is permanent, out of attempts or past its
        deadline; else wait the backoff and return False (the caller re-raises, so Kafka
        delivers the message again)."""
        error_type = type(exc).__name__
        reason = truncated(str(exc) or error_type)
        if isinstance(exc, PERMANENT_ERRORS) or attempts >= self.max_attempts:
            logger.error("giving up", exc_info=exc,
                         extra=log_fields(attempt=attempts, error_type=error_type, error=reason))
            await self._give_up(raw, event, attempts, reason, error_type)
            return True
        if isinstance(event, QueryEvent) and event.expired():
            await self._expire(raw, event, last_error=f"{error_type}: {reason}")
            return True
        delay = _backoff_seconds(attempts)
        logger.warning(
            "handler failed, will retry",
            extra=log_fields(attempt=attempts, max_attempts=self.max_attempts, retry_in_s=delay, error=reason),
        )
        await asyncio.sleep(delay)
        return False

    async def _forget(self, ledger: AttemptLedger, message: tuple[str, int, int]) -> None:
        self._failures.pop(message, None)
        try:
            await ledger.end_attempts(self.group_id, *message)
        except Exception:  # a stale row is purged later; never fail a handled message for it
            logger.warning("could not clear the attempt count", exc_info=True)

    async def _handle(self, raw: RawMessage, event: E, queued_ms: float) -> None:
        message = (raw.topic, raw.partition, raw.offset)
        ledger = self.ledger_factory()
        try:
            attempt = await ledger.begin_attempt(self.group_id, *message)
        except Exception as exc:
            # MongoDB unreachable: nothing can be stored either. Wait, then let Kafka redeliver.
            FAILURES.labels(self.stage, "ledger_unavailable").inc()
            logger.warning("delivery ledger unavailable; retrying", extra=log_fields(error=repr(exc)))
            await asyncio.sleep(LEDGER_RETRY_S)
            raise
        if attempt > self.max_attempts:
            reason = f"the {self.stage} process stopped {attempt - 1} times while handling this message"
            await self._give_up(raw, event, attempt - 1, reason, "ProcessDied")
            await self._forget(ledger, message)
            return
        delivery = Delivery(self.stage, raw.topic, raw.partition, raw.offset, attempt, queued_ms, raw.received)
        try:
            await self.handler(event, delivery)
        except Exception as exc:
            FAILURES.labels(self.stage, type(exc).__name__).inc()
            if await self._gave_up_after(raw, event, exc, attempt):
                await self._forget(ledger, message)
                return
            raise
        await ledger.end_attempts(self.group_id, *message)

    async def _give_up(self, raw: RawMessage, event: E | None, attempts: int, reason: str, error_type: str) -> None:
        await self._dead_letter(raw, attempts, reason, error_type)
        await self._report(self._failure(raw, event, attempts, reason, error_type))

    async def _report(self, failure: Failure) -> bool:
        """Tell the user through the stage's hook. Never raises: a failure that cannot be
        recorded must not bring the message back (that is how a poison message loops)."""
        if self.give_up is None:
            return True
        try:
            await self.give_up(failure)
        except Exception as exc:
            FAILURES.labels(self.stage, "give_up_failed").inc()
            logger.error(
                "could not record the failure; the message is committed",
                exc_info=exc,
                extra=log_fields(error_type=failure.error_type, reason=failure.reason, report_error=truncated(repr(exc))),
            )
            return False
        return True

    async def _dead_letter(self, raw: RawMessage, attempts: int, reason: str, error_type: str) -> None:
        body = raw.body[:DEAD_LETTER_PAYLOAD_MAX_BYTES]
        letter = DeadLetter(
            stage=self.stage,
            topic=raw.topic,
            partition=raw.partition,
            offset=raw.offset,
            key=_key_of(raw),
            payload=body.decode("utf-8", errors="replace"),
            payload_truncated=len(body) < len(raw.body),
            attempts=attempts,
            error=truncated(reason),
            error_type=error_type,
        )
        topic = dlq_topic(raw.topic)
        try:
            await self.bus.publish_raw(topic, letter.model_dump_json().encode(), _key_of(raw))
        except Exception:
            # Kafka may refuse the letter for its size; the ids and the reason always fit. When
            # the broker is down this raises too, and the message comes again once it is back.
            logger.warning("dead letter refused; sending it without the payload", exc_info=True)
            letter = letter.model_copy(update={"payload": "", "payload_truncated": True})
            await self.bus.publish_raw(topic, letter.model_dump_json().encode(), _key_of(raw))
        DLQ_MESSAGES.labels(self.stage, raw.topic).inc()
        logger.error(
            "message dead-lettered",
            extra=log_fields(dlq=topic, attempts=attempts, error=truncated(reason), offset=raw.offset),
        )
