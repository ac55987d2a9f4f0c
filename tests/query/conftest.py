"""Fixtures for the query tests: in-memory indexes and a store holding an indexed PDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.navigator.index import DocumentIndex
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import IndexedDocument
from tests.query.documents import kitchen_guide, plant_manual, software_guide_pdf

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


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


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "qa").is_dir():
        pytest.skip(f"shared data set not found at {SHARED_DATA}")
    return SHARED_DATA
