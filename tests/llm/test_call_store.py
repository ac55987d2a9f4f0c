"""The reply cache's persistent stores: a folder, and the async repository bridged to threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.call_cache import (
    CallCache,
    DirectoryCallStore,
    RepositoryCallStore,
    call_cache_key,
)


@pytest.fixture
def loop_in_thread() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_repository_store_round_trip_from_a_worker_thread(tmp_path, loop_in_thread) -> None:
    store = RepositoryCallStore(EmbeddedRepository(tmp_path), loop_in_thread)
    CallCache(store=store).put("k1", '{"a": 1}')
    fresh = CallCache(store=RepositoryCallStore(EmbeddedRepository(tmp_path), loop_in_thread))
    assert fresh.get("k1") == '{"a": 1}'
    assert fresh.get("missing") is None


async def test_repository_store_refuses_the_loop_thread(tmp_path) -> None:
    store = RepositoryCallStore(EmbeddedRepository(tmp_path), asyncio.get_running_loop())
    # Blocking the loop on its own coroutine would deadlock; the store degrades to a miss.
    assert store.get("k") is None


def test_directory_store_ignores_a_damaged_entry(tmp_path) -> None:
    store = DirectoryCallStore(tmp_path)
    store.put("ab12", {"text": "x"})
    store._path("ab12").write_text("{not json")
    assert store.get("ab12") is None


def test_key_depends_on_model_prompt_and_schema() -> None:
    from pydantic import BaseModel

    class A(BaseModel):
        x: int

    class B(BaseModel):
        y: int

    base = call_cache_key("gemini", "m1", "p", A)
    assert base == call_cache_key("gemini", "m1", "p", A)
    assert len({base, call_cache_key("gemini", "m2", "p", A), call_cache_key("gemini", "m1", "q", A),
                call_cache_key("gemini", "m1", "p", B), call_cache_key("gemini", "m1", "p", None)}) == 5


def test_lru_is_bounded() -> None:
    cache = CallCache(max_entries=2)
    for key in ("a", "b", "c"):
        cache.put(key, key)
    assert cache.get("a") is None and cache.get("c") == "c"
