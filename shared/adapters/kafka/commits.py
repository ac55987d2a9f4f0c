"""Offsets of handled messages, committed together every `interval_s` instead of one commit per
message.

A commit is a request the broker writes to its offsets log, and the handler awaited it before
the next message: for a query stage it was a third of the broker's requests per message. Here a
handled message only moves its partition's pending offset; a background task commits the
pending offsets of the partitions the consumer still owns every `interval_s`, and when the
partitions are revoked (a rebalance) or the stage stops.

The delivery guarantee is unchanged: an offset is committed only once the message before it was
handled (stored and published), so nothing is lost. What a crash costs is more redeliveries —
up to `interval_s` of handled messages come again to the next owner, which recomputes them; a
query is answered once whatever comes again (its answer is inserted by query id, and only the
delivery that inserted it publishes it, see services/verifier/handlers.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError

from shared.adapters.logs import log_fields

logger = logging.getLogger(__name__)


class CommittingConsumer(Protocol):
    """The part of `aiokafka.AIOKafkaConsumer` used here."""

    def assignment(self) -> set[TopicPartition]: ...

    async def commit(self, offsets: dict[TopicPartition, int] | None = None) -> None: ...


class BatchedCommits:
    """Pending offsets of one consumer; `handled` after each message, `run` in the background.
    `interval_s` 0 commits every message at once (the handler awaits it), as before batching."""

    def __init__(self, stage: str, interval_s: float) -> None:
        self.stage = stage
        self.interval_s = interval_s
        self.consumer: CommittingConsumer | None = None
        self._pending: dict[TopicPartition, int] = {}
        self._immediate = interval_s <= 0

    async def handled(self, consumer: CommittingConsumer, topic: str, partition: int, offset: int) -> None:
        """The message at `offset` is done: the next one is where a restart begins."""
        self.consumer = consumer
        tp = TopicPartition(topic, partition)
        self._pending[tp] = max(self._pending.get(tp, 0), offset + 1)
        if self._immediate:
            await self.flush()

    async def flush(self) -> None:
        """Commit what is pending for the partitions still owned; a partition that moved is left
        to its new owner (which redelivers from its last commit), a failed commit is retried."""
        if not self._pending or self.consumer is None:
            return
        owned = self.consumer.assignment()
        offsets = {tp: offset for tp, offset in self._pending.items() if tp in owned}
        self._pending = {}
        if not offsets:
            return
        try:
            await self.consumer.commit(offsets)
        except KafkaError as exc:
            for tp, offset in offsets.items():  # kept unless a later message moved past it
                self._pending[tp] = max(self._pending.get(tp, 0), offset)
            logger.warning("offsets not committed; retrying", extra=log_fields(stage=self.stage, error=repr(exc)))

    def stopping(self) -> None:
        """From now on every handled message is committed at once (the stage is shutting down)."""
        self._immediate = True

    async def run(self) -> None:
        """Commit every `interval_s` until cancelled."""
        if self.interval_s <= 0:
            return
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.flush()
            except asyncio.CancelledError:
                raise
            except Exception:  # never stop committing for one bad round
                logger.warning("offset commit round failed", exc_info=True, extra=log_fields(stage=self.stage))
