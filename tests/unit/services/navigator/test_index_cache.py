"""The navigator keeps at most TREERAG_NAVIGATOR_INDEX_CACHE_PAGES pages of indexes in memory:
past it the ones asked longest ago are dropped (and built again when asked), while a question
over more pages than the bound still gets all of its documents."""

from __future__ import annotations

import asyncio

import pytest

from services.navigator.index_cache import IndexCache
from services.navigator.resolver import MAX_CACHED_REFERENCES, resolve
from shared.app.indexing import store_indexed
from shared.model.documents import IndexedDocument
from shared.text.cross_references import Reference
from tests.support.fakes import FakeRepository
from tests.support.query.documents import plant_manual


def _copies(count: int) -> list[IndexedDocument]:
    return [plant_manual(doc_id=f"{k:016x}") for k in range(count)]


def _stored(count: int) -> tuple[FakeRepository, list[IndexedDocument]]:
    repository = FakeRepository()
    docs = _copies(count)

    async def store() -> None:
        for doc in docs:
            await store_indexed(repository, doc)

    asyncio.run(store())
    return repository, docs


def test_the_indexes_asked_longest_ago_are_dropped_past_the_bound() -> None:
    repository, docs = _stored(4)
    pages = len(docs[0].pages)
    cache = IndexCache(repository, max_pages=2 * pages)

    async def run() -> None:
        for doc in docs[:3]:
            await cache.index(doc.record)
        assert cache.pages_held == 2 * pages
        assert docs[0].record.doc_id not in cache  # the oldest went first
        await cache.index(docs[1].record)  # asked again: now the newest
        await cache.index(docs[3].record)
        assert docs[1].record.doc_id in cache and docs[2].record.doc_id not in cache
        again = await cache.index(docs[0].record)  # a dropped index is built again
        assert again.record.doc_id == docs[0].record.doc_id

    asyncio.run(run())


def test_a_question_over_more_pages_than_the_bound_gets_every_document() -> None:
    repository, docs = _stored(3)
    cache = IndexCache(repository, max_pages=1)

    async def run() -> None:
        found = await cache.indexes(None)
        assert sorted(i.record.doc_id for i in found) == sorted(d.record.doc_id for d in docs)
        await cache.index(docs[0].record)
        assert [d.record.doc_id in cache for d in docs] == [True, False, False]

    asyncio.run(run())


def test_forgetting_a_document_frees_its_pages() -> None:
    repository, docs = _stored(2)
    cache = IndexCache(repository)

    async def run() -> None:
        await cache.indexes(None)
        cache.forget(docs[0].record.doc_id)
        assert cache.pages_held == len(docs[1].pages)

    asyncio.run(run())


def test_a_bound_below_one_page_is_refused() -> None:
    with pytest.raises(ValueError, match="INDEX_CACHE_PAGES"):
        IndexCache(FakeRepository(), max_pages=0)


def test_resolved_references_kept_per_index_are_bounded() -> None:
    repository, docs = _stored(1)

    async def run() -> None:
        index = await IndexCache(repository).index(docs[0].record)
        for k in range(MAX_CACHED_REFERENCES + 50):
            resolve(index, [Reference(kind="section", label=f"{k}.9")])
        assert len(index.reference_cache) == MAX_CACHED_REFERENCES

    asyncio.run(run())
