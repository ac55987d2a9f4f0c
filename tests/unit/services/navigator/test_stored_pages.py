"""Page texts read when a query first needs them: a question routed over a store reads the text
of the documents it shortlists only, and navigates exactly as with every text in memory."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from services.navigator.index import DocumentIndex
from services.navigator.index_cache import IndexCache
from services.navigator.navigate import navigate
from services.navigator.stored_pages import PagesChanged, StoredPages
from shared.app.indexing import store_indexed
from shared.model.documents import IndexedDocument
from shared.model.query import QuerySettings
from shared.text.page_analysis import analyse_pages
from tests.support.fakes import FakeRepository
from tests.support.navigation import configured as navigator_models
from tests.support.query.documents import kitchen_guide, plant_manual

QUESTION = "How often must the coolant pump be serviced?"


def _with_analysis(doc: IndexedDocument) -> IndexedDocument:
    return doc.model_copy(update={"analysis": analyse_pages(doc.pages).to_bytes()})


async def _store(*docs: IndexedDocument) -> FakeRepository:
    repository = FakeRepository()
    for doc in docs:
        await store_indexed(repository, _with_analysis(doc))
    return repository


def _passages(indexes: list[DocumentIndex]) -> list[tuple[str, list[int], str]]:
    found = navigate(QUESTION, indexes, QuerySettings(), models=navigator_models())
    return [(p.doc_id, p.pages, p.text) for p in found.passages]


def test_only_the_shortlisted_documents_text_is_read_and_the_passages_are_the_same() -> None:
    async def run() -> None:
        repository = await _store(plant_manual(), kitchen_guide())
        lazy = await IndexCache(repository, pages_on_use=True).indexes(None)
        assert all(isinstance(ix.pages, StoredPages) and not ix.pages.loaded for ix in lazy)
        assert repository.reads["get_pages"] == 0  # routing data only: no page text at load
        eager = await IndexCache(repository).indexes(None)
        found = await asyncio.to_thread(_passages, lazy)
        assert found == _passages(eager) and found[0][0] == plant_manual().record.doc_id
        loaded = {ix.doc_id: ix.pages.loaded for ix in lazy if isinstance(ix.pages, StoredPages)}
        assert loaded == {plant_manual().record.doc_id: True, kitchen_guide().record.doc_id: False}

    asyncio.run(run())


def test_a_record_stored_before_it_vouched_for_its_pages_has_them_read_at_once() -> None:
    async def run() -> None:
        repository = await _store(plant_manual())
        record = repository.documents[plant_manual().record.doc_id]
        await repository.put_document(record.model_copy(update={"pages_digest": ""}))
        [index] = await IndexCache(repository, pages_on_use=True).indexes(None)
        assert isinstance(index.pages, list) and index.pages == plant_manual().pages

    asyncio.run(run())


def test_pages_changed_since_the_index_was_built_are_not_used() -> None:
    async def run() -> None:
        repository = await _store(plant_manual())
        [index] = await IndexCache(repository, pages_on_use=True).indexes(None)
        await repository.put_pages(index.doc_id, [page + " revised" for page in plant_manual().pages])
        with pytest.raises(PagesChanged, match="ask again"):
            await asyncio.to_thread(lambda: index.pages[0])

    asyncio.run(run())


def test_texts_used_on_the_loop_must_be_read_first_and_then_serve() -> None:
    async def run() -> None:
        repository = await _store(plant_manual())
        [index] = await IndexCache(repository, pages_on_use=True).indexes(None)
        assert isinstance(index.pages, StoredPages)
        with pytest.raises(RuntimeError, match="load"):
            index.pages[1]  # noqa: B018 - reading on the loop without `load()` would deadlock
        await index.pages.load()
        assert index.pages[1] == plant_manual().pages[1] and list(index.pages) == plant_manual().pages

    asyncio.run(run())


def test_warming_a_document_reads_its_texts_on_the_loop() -> None:
    async def run() -> None:
        repository = await _store(plant_manual())
        cache = IndexCache(repository, pages_on_use=True)
        await cache.warm(plant_manual().record.doc_id)
        [index] = await cache.indexes(None)
        assert isinstance(index.pages, StoredPages) and index.pages.loaded

    asyncio.run(run())


def test_an_index_reading_its_pages_later_does_not_keep_its_cache_alive() -> None:
    # A frozen heap (`warm_heap`) is out of the cyclic collector's reach: an index whose page
    # reader held the cache that holds the index would never be freed with its cache.
    async def run() -> weakref.ref[IndexCache]:
        repository = await _store(plant_manual())
        cache = IndexCache(repository, pages_on_use=True)
        [index] = await cache.indexes(None)
        assert isinstance(index.pages, StoredPages)
        return weakref.ref(cache)

    gc.disable()
    try:
        assert asyncio.run(run())() is None  # freed by reference counts alone
    finally:
        gc.enable()
