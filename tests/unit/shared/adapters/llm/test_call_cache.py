"""The reply cache's persistent stores: a folder, and the async repository bridged to threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.call_cache import (
    CALLS_NAMESPACE,
    CallCache,
    DirectoryCallStore,
    RepositoryCallStore,
    call_cache_key,
)
from shared.ports.model_calls import current_sources, made_from


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
    repository = EmbeddedRepository(tmp_path)
    store = DirectoryCallStore(repository)
    store.put("ab12", {"text": "x"})
    repository._cache_path(CALLS_NAMESPACE, "ab12").write_text("{not json")
    assert store.get("ab12") is None


@pytest.mark.parametrize("bridged", [False, True], ids=["cli-folder", "repository"])
def test_a_reply_made_from_a_document_is_deleted_with_it(tmp_path, loop_in_thread, bridged: bool) -> None:
    repository = EmbeddedRepository(tmp_path)
    store = RepositoryCallStore(repository, loop_in_thread) if bridged else DirectoryCallStore(repository)
    cache = CallCache(store=store)
    with made_from(["doc-a"]), made_from(["doc-b", "doc-a"]):
        assert current_sources() == ("doc-a", "doc-b")
        cache.put("quoting-a-and-b", "the valve opens at 111 bar")
    cache.put("made-from-nothing", "ok")
    with made_from(["doc-c"]):
        cache.put("quoting-c", "pumps")
    assert current_sources() == ()

    asyncio.run_coroutine_threadsafe(repository.delete_document("doc-b"), loop_in_thread).result(10)
    fresh = CallCache(store=store)
    assert fresh.get("quoting-a-and-b") is None
    assert fresh.get("quoting-c") == "pumps" and fresh.get("made-from-nothing") == "ok"
    assert not any(b"111 bar" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_the_documents_follow_a_call_into_a_worker_thread(tmp_path) -> None:
    seen: list[tuple[str, ...]] = []

    async def main() -> None:
        with made_from(["doc-a"]):
            await asyncio.to_thread(lambda: seen.append(current_sources()))

    asyncio.run(main())
    assert seen == [("doc-a",)]


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
