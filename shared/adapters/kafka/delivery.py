"""At-least-once consumption: attempts, retries, dead-lettering, metrics and correlated logs.

The subscriber runs with `AckPolicy.NACK_ON_ERROR`: the offset is committed when the handler
returns (after it stored and published its output) and rewound when it raises, so the message
is delivered again. `consume_reliably` decides which of the two happens:

- the handler succeeds -> commit;
- it raises and attempts remain -> back off, raise -> redelivery;
- it raises a `PermanentError`, or the last attempt fails, or the process died during the
  previous attempts -> the message goes to `<topic>.dlq` with the error, the stage's `give_up`
  hook reports the failure to the user (document or query marked failed), and it is committed;
- a query event whose deadline has passed (its client has stopped waiting) is dropped without
  running the stage: the query is marked failed, so an overload drains instead of piling up.

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

from pydantic import ValidationError

from shared.adapters.kafka.broker import Bus
from shared.adapters.logs import correlated, log_fields
from shared.adapters.metrics import (
    DLQ_MESSAGES,
    FAILURES,
    HANDLER_SECONDS,
    MESSAGES_CONSUMED,
    QUEUE_SECONDS,
)
from shared.adapters.mongo.ledger import DeliveryLedger
from shared.model.delivery import Delivery, PermanentError
from shared.model.events import (
    DeadLetter,
    DocumentEvent,
    Event,
    QueryEvent,
    dlq_topic,
)

logger = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)

LEDGER_RETRY_S = 2.0


Handler = Callable[[E, Delivery], Awaitable[None]]
GiveUp = Callable[[E, str, str], Awaitable[None]]  # (event, error_type, reason)


@dataclass
class RawMessage:
    topic: str
    partition: int
    offset: int
    key: str | None
    body: bytes


def _correlation(event: Event) -> dict[str, str]:
    ids = {"event_id": event.event_id}
    if isinstance(event, DocumentEvent):
        ids["doc_id"] = event.doc_id
    if isinstance(event, QueryEvent):
        ids["query_id"] = event.query_id
    return ids


def _backoff_seconds(attempt: int) -> float:
    return min(0.25 * 2 ** (attempt - 1), 5.0)


@dataclass
class ReliableConsumer(Generic[E]):
    stage: str
    group_id: str
    event_type: type[E]
    handler: Handler[E]
    bus: Bus
    ledger_factory: Callable[[], DeliveryLedger]
    max_attempts: int
    give_up: GiveUp[E] | None = None
    durable_attempts: bool = True
    # Failures seen by this process per (topic, partition, offset): only messages that failed.
    _failures: dict[tuple[str, int, int], int] = field(default_factory=dict)

    async def __call__(self, raw: RawMessage) -> None:
        MESSAGES_CONSUMED.labels(self.stage, raw.topic).inc()
        try:
            event = self.event_type.model_validate_json(raw.body)
        except ValidationError as exc:
            # Unparseable input cannot get better by retrying.
            FAILURES.labels(self.stage, "invalid_event").inc()
            await self._dead_letter(raw, 1, f"not a valid {self.event_type.__name__}: {exc}", "ValidationError")
            return
        queued_s = event.age_seconds()
        QUEUE_SECONDS.labels(self.stage).observe(queued_s)
        with correlated(stage=self.stage, **_correlation(event)):
            if isinstance(event, QueryEvent) and event.expired():
                await self._expire(event)
                return
            if self.durable_attempts:
                await self._handle(raw, event, queued_s * 1000)
            else:
                await self._handle_counting_failures(raw, event, queued_s * 1000)

    async def _expire(self, event: E) -> None:
        FAILURES.labels(self.stage, "deadline_expired").inc()
        assert isinstance(event, QueryEvent)
        deadline = event.deadline.isoformat() if event.deadline else "?"
        logger.warning("query expired before this stage; dropped", extra=log_fields(deadline=deadline))
        if self.give_up is not None:
            reason = (f"the query expired (deadline {deadline}) before the {self.stage} stage could handle it; "
                      "the services are overloaded: ask again later or raise timeout_s")
            await self.give_up(event, "DeadlineExpired", reason)

    async def _handle_counting_failures(self, raw: RawMessage, event: E, queued_ms: float) -> None:
        message = (raw.topic, raw.partition, raw.offset)
        ledger = self.ledger_factory()
        attempt = self._failures.get(message, 0) + 1
        delivery = Delivery(self.stage, raw.topic, raw.partition, raw.offset, attempt, queued_ms)
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
        finally:
            HANDLER_SECONDS.labels(self.stage).observe(time.perf_counter() - delivery.started)
        if message in self._failures:
            await self._forget(ledger, message)

    async def _gave_up_after(self, raw: RawMessage, event: E, exc: Exception, attempts: int) -> bool:
        """After a failed attempt: dead-letter the message and return True when it is permanent or
        out of attempts; else wait the backoff and return False (the caller re-raises, so Kafka
        delivers the message again)."""
        error_type = type(exc).__name__
        reason = str(exc) or error_type
        if isinstance(exc, PermanentError) or attempts >= self.max_attempts:
            logger.exception("giving up", extra=log_fields(attempt=attempts, error_type=error_type))
            await self._give_up(raw, event, attempts, reason, error_type)
            return True
        delay = _backoff_seconds(attempts)
        logger.warning(
            "handler failed, will retry",
            extra=log_fields(attempt=attempts, max_attempts=self.max_attempts, retry_in_s=delay, error=reason),
        )
        await asyncio.sleep(delay)
        return False

    async def _forget(self, ledger: DeliveryLedger, message: tuple[str, int, int]) -> None:
        self._failures.pop(message, None)
        try:
            await ledger.end_attempts(self.group_id, *message)
        except Exception:  # a stale row is purged later; never fail a handled message for it
            logger.warning("could not clear the attempt count", exc_info=True)

    async def _handle(self, raw: RawMessage, event: E, queued_ms: float) -> None:
        ledger = self.ledger_factory()
        try:
            attempt = await ledger.begin_attempt(self.group_id, raw.topic, raw.partition, raw.offset)
        except Exception as exc:
            # MongoDB unreachable: nothing can be stored either. Wait, then let Kafka redeliver.
            FAILURES.labels(self.stage, "ledger_unavailable").inc()
            logger.warning("delivery ledger unavailable; retrying", extra=log_fields(error=repr(exc)))
            await asyncio.sleep(LEDGER_RETRY_S)
            raise
        if attempt > self.max_attempts:
            reason = f"the {self.stage} process stopped {attempt - 1} times while handling this message"
            await self._give_up(raw, event, attempt - 1, reason, "ProcessDied")
            await ledger.end_attempts(self.group_id, raw.topic, raw.partition, raw.offset)
            return
        delivery = Delivery(self.stage, raw.topic, raw.partition, raw.offset, attempt, queued_ms)
        try:
            await self.handler(event, delivery)
        except Exception as exc:
            FAILURES.labels(self.stage, type(exc).__name__).inc()
            if await self._gave_up_after(raw, event, exc, attempt):
                await ledger.end_attempts(self.group_id, raw.topic, raw.partition, raw.offset)
                return
            raise
        finally:
            HANDLER_SECONDS.labels(self.stage).observe(time.perf_counter() - delivery.started)
        await ledger.end_attempts(self.group_id, raw.topic, raw.partition, raw.offset)

    async def _give_up(self, raw: RawMessage, event: E, attempts: int, reason: str, error_type: str) -> None:
        await self._dead_letter(raw, attempts, reason, error_type)
        if self.give_up is not None:
            await self.give_up(event, error_type, reason)

    async def _dead_letter(self, raw: RawMessage, attempts: int, reason: str, error_type: str) -> None:
        letter = DeadLetter(
            stage=self.stage,
            topic=raw.topic,
            partition=raw.partition,
            offset=raw.offset,
            key=raw.key,
            payload=raw.body.decode("utf-8", errors="replace"),
            attempts=attempts,
            error=reason,
            error_type=error_type,
        )
        await self.bus.publish_raw(dlq_topic(raw.topic), letter.model_dump_json().encode(), raw.key)
        DLQ_MESSAGES.labels(self.stage, raw.topic).inc()
        logger.error(
            "message dead-lettered",
            extra=log_fields(dlq=dlq_topic(raw.topic), attempts=attempts, error=reason, offset=raw.offset),
        )
