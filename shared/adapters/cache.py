"""The answer cache: an LRU in front of the repository (embedded store in one process, MongoDB in the services)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from shared.adapters.logs import log_fields
from shared.adapters.metrics import CACHE_HITS, CACHE_MISSES, CACHE_WRITE_SECONDS
from shared.ports.repository import CachedValues

logger = logging.getLogger(__name__)

CACHE_NAME = "answer"


class AnswerCache:
    """Async get/put of JSON-able answers by key; hits and misses are counted (metrics too)."""

    namespace = "answers"

    def __init__(self, repository: CachedValues | None = None, *, max_entries: int = 1024) -> None:
        self.repository = repository
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._refs: dict[str, frozenset[str]] = {}  # key -> doc ids its answer was made from
        self._lock = asyncio.Lock()

    async def get(self, key: str) -> dict[str, Any] | None:
        async with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
        if value is None and self.repository is not None:
            try:
                value = await self.repository.get_cached(self.namespace, key)
            except Exception:  # an unreachable store costs a recomputation, not the query
                logger.warning("answer cache read failed", exc_info=True, extra=log_fields(key=key[:16]))
                value = None
            if value is not None:
                await self._remember(key, value)
        if value is None:
            self.misses += 1
            CACHE_MISSES.labels(cache=CACHE_NAME).inc()
            return None
        self.hits += 1
        CACHE_HITS.labels(cache=CACHE_NAME).inc()
        return json.loads(json.dumps(value))  # callers may mutate their copy

    async def put(self, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None:
        """`refs`: the doc ids the answer was made from (deleting one drops the entry)."""
        await self._remember(key, value, refs)
        if self.repository is not None:
            writing = time.perf_counter()
            try:
                await self.repository.put_cached(self.namespace, key, value, refs=refs)
            except Exception:
                logger.warning("answer cache write failed", exc_info=True, extra=log_fields(key=key[:16]))
            finally:
                CACHE_WRITE_SECONDS.labels(cache=CACHE_NAME).observe(time.perf_counter() - writing)

    async def _remember(self, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None:
        async with self._lock:
            self._entries[key] = json.loads(json.dumps(value))
            self._entries.move_to_end(key)
            if refs:
                self._refs[key] = frozenset(refs)
            while len(self._entries) > self.max_entries:
                dropped, _ = self._entries.popitem(last=False)
                self._refs.pop(dropped, None)

    async def forget_document(self, doc_id: str) -> int:
        """Drop the entries kept in memory that hold anything of `doc_id` (the store's copies
        go with the document itself); how many."""
        quoted = json.dumps(doc_id)
        async with self._lock:
            stale = [key for key, value in self._entries.items()
                     if doc_id in self._refs.get(key, ()) or quoted in json.dumps(value)]
            for key in stale:
                del self._entries[key]
                self._refs.pop(key, None)
        return len(stale)
