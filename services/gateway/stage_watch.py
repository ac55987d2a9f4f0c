"""Which of the stages a query needs have a live process, from the stages' heartbeats
(shared.adapters.mongo.heartbeats), read at most every `STAGE_CHECK_S` seconds.

A query sent while one of them has none would wait out its whole timeout for an answer nobody
computes; the gateway refuses it at once instead, naming the stage (`services/gateway/app.py`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from datetime import timedelta

from shared.model.clock import utc_now
from shared.ports.heartbeats import HeartbeatReader

logger = logging.getLogger(__name__)

# The stages a query passes through, in order.
QUERY_STAGES = ("navigator", "compressor", "verifier")
# How long one reading of the heartbeats is trusted: a stage that dies is refused within this
# time after its heartbeat expires, and a busy gateway reads the heartbeats twice a second at most.
STAGE_CHECK_S = 0.5


class LiveStages:
    def __init__(self, heartbeats: HeartbeatReader, ttl_s: float, check_every_s: float = STAGE_CHECK_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.heartbeats = heartbeats
        self.ttl_s = ttl_s
        self.check_every_s = check_every_s
        self.clock = clock
        self._live: frozenset[str] | None = None
        self._read_at = float("-inf")

    async def missing(self, stages: Sequence[str] = QUERY_STAGES) -> list[str]:
        """The `stages` with no heartbeat within the TTL; none when the heartbeats cannot be
        read (the store's own outage is answered where the store is used)."""
        now = self.clock()
        if now - self._read_at >= self.check_every_s:
            try:
                beats = await self.heartbeats.seen_since(utc_now() - timedelta(seconds=self.ttl_s))
            except Exception as exc:  # noqa: BLE001 - a query then goes ahead and meets the outage itself
                logger.warning("heartbeats unreadable", extra={"fields": {"error": type(exc).__name__}})
                self._live, self._read_at = None, now
                return []
            self._live, self._read_at = frozenset(beat.stage for beat in beats), now
        if self._live is None:
            return []
        return [stage for stage in stages if stage not in self._live]
