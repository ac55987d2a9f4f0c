"""Page and node vectors on the real FerretDB: stored in parts beside a small head row, read
back exactly, replaced by a rebuild and removed when a document is re-indexed without them."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from shared.adapters.embeddings import embed_document, make_embedder
from shared.adapters.mongo import store as mongo_store
from shared.adapters.mongo.store import MongoRepository, connect
from shared.model.documents import (
    DocumentEmbeddings,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.tree import TreeNode
from shared.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
async def repo(infra: Any) -> AsyncIterator[MongoRepository]:
    client = connect(infra.mongo_url)
    name = f"vectors_{uuid.uuid4().hex[:8]}"
    repository = MongoRepository(client, name, owns_client=False)
    await repository.ensure_indexes()
    yield repository
    await client.drop_database(name)
    await client.close()


def _vectors(doc_id: str, pages: int, nodes: int, seed: int, dimension: int = 16) -> DocumentEmbeddings:
    rng = np.random.default_rng(seed)
    page_rows = rng.normal(size=(pages, dimension)).astype(np.float32)
    node_rows = rng.normal(size=(nodes, dimension)).astype(np.float32)
    return DocumentEmbeddings.from_arrays(
        doc_id, "test:random", page_rows, [f"{n:04d}" for n in range(1, nodes + 1)], node_rows
    )


async def test_vectors_round_trip_in_several_parts(repo: MongoRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mongo_store, "CHUNK_BYTES", 300)
    stored = _vectors("doc1", pages=20, nodes=7, seed=1)  # (20 + 7) x 16 x 2 bytes = 864 bytes
    await repo.put_embeddings(stored)

    assert await repo.get_embeddings("doc1") == stored
    assert await repo.embedding_parts.count_documents({"doc_id": "doc1"}) == 3
    assert await repo.get_embeddings("unknown") is None


async def test_a_smaller_rebuild_replaces_vectors_and_drops_stale_parts(
    repo: MongoRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mongo_store, "CHUNK_BYTES", 300)
    await repo.put_embeddings(_vectors("doc2", pages=20, nodes=7, seed=2))
    smaller = _vectors("doc2", pages=5, nodes=2, seed=3)
    await repo.put_embeddings(smaller)

    assert await repo.get_embeddings("doc2") == smaller
    assert await repo.embedding_parts.count_documents({"doc_id": "doc2"}) == 1


async def test_indexed_document_keeps_its_wordllama_vectors_until_indexed_without(repo: MongoRepository) -> None:
    embedder = make_embedder(Settings(embeddings="wordllama"))
    assert embedder is not None
    pages = ["Installing packages from a repository.", "Drawing histograms and scatter plots."]
    nodes = [TreeNode(id="0001", title="Packages", page_start=1, page_end=1, level=1),
             TreeNode(id="0002", title="Graphics", page_start=2, page_end=2, level=1)]
    record = DocumentRecord(doc_id="doc3", file_name="guide.pdf", page_count=2, status=DocumentStatus.READY)
    indexed = IndexedDocument(record=record, pages=pages, tree=DocumentTree(doc_id="doc3", nodes=nodes),
                              embeddings=embed_document("doc3", pages, nodes, embedder))
    await repo.put_indexed(indexed)

    stored = await repo.get_embeddings("doc3")
    assert stored == indexed.embeddings
    assert stored is not None
    assert np.allclose(stored.page_matrix(), embedder.embed(pages), atol=2e-3)

    await repo.put_indexed(indexed.model_copy(update={"embeddings": None}))
    assert await repo.get_embeddings("doc3") is None
    assert await repo.embedding_parts.count_documents({"doc_id": "doc3"}) == 0
    assert await repo.get_pages("doc3") == pages
