"""What a handler knows about the message it handles, the redeliveries it has seen, and what a
give-up hook is told when the delivery layer ends a message."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from shared.model.clock import utc_now
from shared.model.events import StageTiming


class PermanentError(Exception):
    """Retrying cannot help (bad input, missing data): dead-letter at once."""


@dataclass(frozen=True)
class Failure:
    """What a give-up hook is told: ids, where and why, never the message body (it may be what
    made the handler fail, and storing it would fail the same way)."""

    stage: str
    topic: str
    key: str | None  # the correlation id (query_id or doc_id); None when the message has none
    error_type: str
    reason: str
    attempts: int
    tenant: str = "default"
    deadline: datetime | None = None
    timings: tuple[StageTiming, ...] = ()
    # False when the message did not validate: `key` is then only what the Kafka key claims.
    decoded: bool = True


@dataclass
class Delivery:
    """What a handler knows about the message it is handling."""

    stage: str
    topic: str
    partition: int
    offset: int
    attempt: int
    queued_ms: float
    started: float = field(default_factory=time.perf_counter)

    def timing(self) -> StageTiming:
        """This stage's entry for the query's per-stage timings, measured up to now (the bus
        that publishes it extends it to the send)."""
        elapsed_s = time.perf_counter() - self.started
        return StageTiming(
            stage=self.stage,
            queued_ms=round(self.queued_ms, 3),
            processing_ms=round(elapsed_s * 1000, 3),
            started_at=utc_now() - timedelta(seconds=elapsed_s),
        )


class RecentKeys:
    """The last `size` keys this process finished (an LRU set), for skipping redeliveries."""

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self._keys: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def add(self, key: str) -> None:
        self._keys[key] = None
        self._keys.move_to_end(key)
        while len(self._keys) > self.size:
            self._keys.popitem(last=False)

    def discard(self, key: str) -> None:
        self._keys.pop(key, None)
