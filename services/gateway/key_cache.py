"""The gateway's memory of API key look-ups: the records of keys found, and apart from them the
ids found unknown, each reused for TREERAG_AUTH_CACHE_S.

Two bounded lists (`shared/model/lru.py`), so a flood of guessed ids, however many, never pushes
a key in use out of the cache and never grows memory past MAX_UNKNOWN_KEYS; a guessed id asked
again costs no store read. Concurrent requests for an id not held share one store read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from shared.adapters.metrics import CACHE_HITS, CACHE_MISSES
from shared.model.api_keys import ApiKeyRecord
from shared.model.lru import Lru
from shared.ports.api_keys import KeyLookup

MAX_CACHED_KEYS = 10_000
MAX_UNKNOWN_KEYS = 10_000
# The metrics' name for it: every miss is one read of the key store.
CACHE_NAME = "api_key"


@dataclass(frozen=True)
class Held:
    """What the cache holds of a key id: its record, or None for an id the store does not know."""

    record: ApiKeyRecord | None


class KeyCache:
    def __init__(self, store: Callable[[], KeyLookup], ttl_s: float, clock: Callable[[], float] = time.monotonic,
                 max_known: int = MAX_CACHED_KEYS, max_unknown: int = MAX_UNKNOWN_KEYS) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.clock = clock
        self._known: Lru[str, tuple[ApiKeyRecord, float]] = Lru(max_known)
        self._unknown: Lru[str, float] = Lru(max_unknown)
        self._reading: dict[str, asyncio.Future[ApiKeyRecord | None]] = {}
        self.reads = 0  # store reads made

    def held(self, key_id: str) -> Held | None:
        """The cache's answer for `key_id` while it is fresh; None when only the store can say."""
        now = self.clock()
        known = self._known.get(key_id)
        if known is not None and now - known[1] < self.ttl_s:
            return Held(known[0])
        seen = self._unknown.get(key_id)
        if seen is not None and now - seen < self.ttl_s:
            return Held(None)
        return None

    def reading(self, key_id: str) -> bool:
        """True while a store read of `key_id` is under way (a request for it waits for that one)."""
        return key_id in self._reading

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        """The `KeyLookup` port: the held answer, else one store read shared by every request
        that asks for `key_id` meanwhile."""
        held = self.held(key_id)
        if held is not None:
            CACHE_HITS.labels(cache=CACHE_NAME).inc()
            return held.record
        pending = self._reading.get(key_id)
        if pending is not None:
            return await asyncio.shield(pending)
        CACHE_MISSES.labels(cache=CACHE_NAME).inc()
        future: asyncio.Future[ApiKeyRecord | None] = asyncio.get_running_loop().create_future()
        self._reading[key_id] = future
        try:
            self.reads += 1
            record = await self.store().get(key_id)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # marked retrieved: a failed read nobody else awaited logs no warning
            raise
        else:
            self._remember(key_id, record)
            future.set_result(record)
            return record
        finally:
            del self._reading[key_id]

    def forget(self, key_id: str) -> None:
        """Drop what is held of `key_id` (revoked here: the next request reads the store)."""
        self._known.pop(key_id)
        self._unknown.pop(key_id)

    def _remember(self, key_id: str, record: ApiKeyRecord | None) -> None:
        now = self.clock()
        if record is None:
            self._known.pop(key_id)
            self._unknown.put(key_id, now)
        else:
            self._unknown.pop(key_id)
            self._known.put(key_id, (record, now))
