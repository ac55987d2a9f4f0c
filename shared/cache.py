"""The answer cache: a key that covers everything that changes an answer, and an LRU in front
of the repository (embedded store in one process, MongoDB in the services)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
import logging
from collections import OrderedDict
from typing import Any

from shared.logs import log_fields
from shared.metrics import CACHE_HITS, CACHE_MISSES
from shared.query import QuerySettings
from shared.store.base import Repository

logger = logging.getLogger(__name__)

# Bump when the key's material or the cached value's shape changes: old entries then miss.
KEY_SCHEMA_VERSION = 1
CACHE_NAME = "answer"


def _product_version() -> str:
    # A new release may navigate or verify differently: its answers must not be served from
    # entries an older release wrote.
    try:
        return importlib.metadata.version("treerag")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


PRODUCT_VERSION = _product_version()


def answer_cache_key(
    question: str,
    documents: list[tuple[str, int]],
    settings: QuerySettings,
    *,
    model: str,
    language: str,
    prompt_version: str,
) -> str:
    """SHA-256 (hex) of a canonical JSON of the question, the (doc_id, version) pairs, every
    QuerySettings field (read from the model, so a new setting is never forgotten), the
    model ("extractive" offline), the answer language, the prompt version and the product
    release."""
    material = {
        "key_schema": KEY_SCHEMA_VERSION,
        "product": PRODUCT_VERSION,
        "question": " ".join(question.split()),
        "documents": sorted([str(doc_id), int(version)] for doc_id, version in documents),
        "settings": settings.model_dump(mode="json"),
        "model": model,
        "language": language,
        "prompt_version": prompt_version,
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class AnswerCache:
    """Async get/put of JSON-able answers by key; hits and misses are counted (metrics too)."""

    namespace = "answers"

    def __init__(self, repository: Repository | None = None, *, max_entries: int = 1024) -> None:
        self.repository = repository
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, dict[str, Any]] = OrderedDict()
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

    async def put(self, key: str, value: dict[str, Any]) -> None:
        await self._remember(key, value)
        if self.repository is not None:
            try:
                await self.repository.put_cached(self.namespace, key, value)
            except Exception:
                logger.warning("answer cache write failed", exc_info=True, extra=log_fields(key=key[:16]))

    async def _remember(self, key: str, value: dict[str, Any]) -> None:
        async with self._lock:
            self._entries[key] = json.loads(json.dumps(value))
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
