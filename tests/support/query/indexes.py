"""Fixtures for the query tests: in-memory indexes and a store holding an indexed PDF (the
conftest.py of the folders whose tests use them imports them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.navigator.index import DocumentIndex
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import IndexedDocument
from tests.support.query.documents import kitchen_guide, plant_manual, software_guide_pdf


def build(doc: IndexedDocument) -> DocumentIndex:
    return DocumentIndex.build(doc.record, doc.tree, doc.pages)


@pytest.fixture
def plant() -> DocumentIndex:
    return build(plant_manual())


@pytest.fixture
def kitchen() -> DocumentIndex:
    return build(kitchen_guide())


@pytest.fixture(scope="session")
def guide_indexed() -> IndexedDocument:
    """The generated software guide, indexed by the real indexer (outline builder)."""
    from services.indexer.pipeline import IndexOptions, index_pdf

    return index_pdf(software_guide_pdf(), "guide.pdf", IndexOptions())


@pytest.fixture
async def guide_store(tmp_path: Path, guide_indexed: IndexedDocument) -> EmbeddedRepository:
    """An embedded store holding the guide and the plant manual."""
    repository = EmbeddedRepository(tmp_path / "store")
    await repository.put_indexed(guide_indexed)
    await repository.put_indexed(plant_manual())
    return repository

