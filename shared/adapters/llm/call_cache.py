"""Cache of model replies keyed by (provider, model, prompt, schema).

An in-process LRU in front of an optional persistent store: a folder in one process, the
repository (MongoDB) in the services. Replies are deterministic enough at temperature 0 that
re-indexing the same PDF or re-asking the same question costs no model call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from pydantic import BaseModel

from shared.adapters.logs import log_fields
from shared.adapters.metrics import CACHE_HITS, CACHE_MISSES
from shared.ports.model_calls import current_sources
from shared.ports.repository import CachedValues

logger = logging.getLogger(__name__)

CACHE_NAME = "llm"


def call_cache_key(provider: str, model: str, prompt: str, schema: type[BaseModel] | None) -> str:
    schema_json = json.dumps(schema.model_json_schema(), sort_keys=True) if schema else "text"
    material = json.dumps([provider, model, prompt, schema_json], ensure_ascii=False)
    return hashlib.sha256(material.encode()).hexdigest()


# Where replies are kept among a store's cached values (`CachedValues`).
CALLS_NAMESPACE = "llm_calls"


class CallStore(Protocol):
    """A synchronous persistent store of replies (`{"text": ...}`) by key."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None:
        """`refs`: the documents the prompt was made from; deleting one drops the reply."""
        ...


class FolderCachedValues(Protocol):
    """A folder store's cached values, read and written without an event loop."""

    def read_cached(self, namespace: str, key: str) -> dict[str, Any] | None: ...

    def write_cached(self, namespace: str, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None: ...


class DirectoryCallStore:
    """Replies among the one-process store's cached values, for the CLI: deleting a document
    from the store drops the replies made from it, as in the services."""

    def __init__(self, store: FolderCachedValues) -> None:
        self.store = store

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return self.store.read_cached(CALLS_NAMESPACE, key)
        except ValueError:
            logger.warning("unreadable cached reply ignored", extra=log_fields(key=key))
            return None

    def put(self, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None:
        self.store.write_cached(CALLS_NAMESPACE, key, value, refs)


class RepositoryCallStore:
    """Bridges the async repository to the synchronous clients running in worker threads.

    `loop` is the event loop that owns the repository's connections; calls from that loop's
    own thread would deadlock, so they are refused.
    """

    namespace = CALLS_NAMESPACE

    def __init__(self, repository: CachedValues, loop: asyncio.AbstractEventLoop, timeout_s: float = 10.0):
        self.repository = repository
        self.loop = loop
        self.timeout_s = timeout_s

    def _run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            coro.close()
            raise RuntimeError("RepositoryCallStore used from the event loop thread: run the LLM call in a worker thread")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(self.timeout_s)
        except FutureTimeout:
            future.cancel()
            raise

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return self._run(self.repository.get_cached(self.namespace, key))
        except Exception:  # the cache is an optimisation: a store outage must not fail the call
            logger.warning("LLM call cache read failed", exc_info=True)
            return None

    def put(self, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None:
        try:
            self._run(self.repository.put_cached(self.namespace, key, value, refs))
        except Exception:
            logger.warning("LLM call cache write failed", exc_info=True)


class CallCache:
    """Thread-safe LRU of reply texts, optionally backed by a `CallStore`."""

    def __init__(self, max_entries: int = 2048, store: CallStore | None = None) -> None:
        self.max_entries = max_entries
        self.store = store
        self._entries: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            text = self._entries.get(key)
            if text is not None:
                self._entries.move_to_end(key)
        if text is None and self.store is not None:
            stored = self.store.get(key)
            text = stored.get("text") if stored else None
            if isinstance(text, str):
                self._remember(key, text)
            else:
                text = None
        (CACHE_HITS if text is not None else CACHE_MISSES).labels(cache=CACHE_NAME).inc()
        return text

    def put(self, key: str, text: str) -> None:
        """Kept under the documents the call was made from (`shared.ports.model_calls`)."""
        self._remember(key, text)
        if self.store is not None:
            self.store.put(key, {"text": text}, current_sources())

    def _remember(self, key: str, text: str) -> None:
        with self._lock:
            self._entries[key] = text
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
