"""A document's page analysis (opaque bytes made at indexing) in both stores: written whole and
read back exactly however large, replaced by a rebuild without leaving the older bytes behind,
dropped when the document is indexed again without one, and removed with the document. On
MongoDB it is split over parts of at most `CHUNK_BYTES` beside a small head row."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.mongo.store import CHUNK_BYTES, MongoRepository, connect
from shared.model.documents import DocumentEmbeddings, DocumentRecord, DocumentStatus, DocumentTree, IndexedDocument
from shared.model.tree import TreeNode

LARGE = 10 * 1024 * 1024 + 12_345  # three parts on MongoDB
SMALL = 300_001


def blob(size: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, size=size, dtype=np.uint8).tobytes()


def document(doc_id: str, analysis: bytes | None) -> IndexedDocument:
    record = DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf", page_count=2, status=DocumentStatus.READY)
    nodes = [TreeNode(id="0001", title="Intro", page_start=1, page_end=2, level=1)]
    return IndexedDocument(record=record, pages=["one", "two"], tree=DocumentTree(doc_id=doc_id, nodes=nodes),
                           analysis=analysis)


async def test_a_large_analysis_round_trips_and_a_smaller_rebuild_replaces_it(repo: Any) -> None:
    large = blob(LARGE, seed=1)
    await repo.put_analysis("doc1", large)
    assert await repo.get_analysis("doc1") == large
    assert await repo.get_analysis("unknown") is None

    smaller = blob(SMALL, seed=2)
    await repo.put_analysis("doc1", smaller)
    assert await repo.get_analysis("doc1") == smaller
    await repo.put_analysis("doc1", b"")
    assert await repo.get_analysis("doc1") == b""


async def test_indexing_again_without_an_analysis_drops_the_older_one(repo: Any) -> None:
    data = blob(SMALL, seed=3)
    await repo.put_indexed(document("doc2", data))
    assert await repo.get_analysis("doc2") == data
    assert (await repo.get_document("doc2")).status == DocumentStatus.READY

    await repo.put_indexed(document("doc2", None))
    assert await repo.get_analysis("doc2") is None
    assert await repo.get_pages("doc2") == ["one", "two"]


async def test_deleting_the_document_removes_its_analysis_and_keeps_the_others(repo: Any) -> None:
    gone, kept = blob(LARGE, seed=4), blob(SMALL, seed=5)
    await repo.put_indexed(document("gone", gone))
    await repo.put_indexed(document("kept", kept))

    assert await repo.delete_document("gone")
    assert await repo.get_analysis("gone") is None
    assert await repo.get_analysis("kept") == kept
    assert not await repo.delete_document("gone")  # again: nothing left, still fine


async def test_the_embedded_store_writes_one_file_per_document_atomically(tmp_path: Path) -> None:
    repo = EmbeddedRepository(tmp_path)
    data = blob(SMALL, seed=6)
    await repo.put_analysis("doc3", data)
    assert [p.name for p in (tmp_path / "analysis").iterdir()] == ["doc3.bin"]  # no temporary file left
    assert (tmp_path / "analysis" / "doc3.bin").read_bytes() == data

    await repo.put_indexed(document("doc3", None))
    assert list((tmp_path / "analysis").iterdir()) == []


def test_an_indexed_documents_analysis_survives_json() -> None:
    data = bytes(range(256)) * 3  # not UTF-8
    vectors = DocumentEmbeddings(doc_id="doc4", model="test", dimension=2, page_vectors=b"\xff\x00" * 4)
    indexed = document("doc4", data).model_copy(update={"embeddings": vectors})
    again = IndexedDocument.model_validate_json(indexed.model_dump_json())
    assert again.analysis == data and again == indexed
    assert IndexedDocument.model_validate_json(document("doc4", None).model_dump_json()).analysis is None


# ------------------------------------------------------------ MongoDB rows


@pytest.fixture
async def mongo(infra: Any) -> AsyncIterator[MongoRepository]:
    client = connect(infra.mongo_url)
    name = f"analysis_rows_{uuid.uuid4().hex[:8]}"
    repository = MongoRepository(client, name, owns_client=False)
    await repository.ensure_indexes()
    yield repository
    await client.drop_database(name)
    await client.close()


def part_ids(doc_id: str, count: int) -> list[str]:
    return [f"{doc_id}:{k}" for k in range(count)]


async def stored_parts(repo: MongoRepository, doc_id: str, upto: int = 8) -> list[str]:
    rows = [await repo.analysis_parts.find_one({"_id": i}, {"_id": 1}) for i in part_ids(doc_id, upto)]
    return [row["_id"] for row in rows if row is not None]


@pytest.mark.integration
async def test_mongo_keeps_a_small_head_and_parts_and_a_rebuild_leaves_no_stale_part(mongo: MongoRepository) -> None:
    large = blob(LARGE, seed=7)
    await mongo.put_analysis("doc5", large)
    parts = -(-LARGE // CHUNK_BYTES)
    assert parts == 3
    head = await mongo.analysis.find_one({"_id": "doc5"})
    assert head == {"_id": "doc5", "bytes": LARGE, "parts": parts}
    assert await stored_parts(mongo, "doc5") == part_ids("doc5", parts)
    for k in range(parts):
        row = await mongo.analysis_parts.find_one({"_id": f"doc5:{k}"})
        assert row is not None and bytes(row["data"]) == large[k * CHUNK_BYTES : (k + 1) * CHUNK_BYTES]

    smaller = blob(SMALL, seed=8)
    await mongo.put_analysis("doc5", smaller)
    assert await mongo.get_analysis("doc5") == smaller
    assert await mongo.analysis.find_one({"_id": "doc5"}) == {"_id": "doc5", "bytes": SMALL, "parts": 1}
    assert await stored_parts(mongo, "doc5") == ["doc5:0"]


@pytest.mark.integration
async def test_mongo_refuses_an_incomplete_analysis(mongo: MongoRepository) -> None:
    await mongo.put_analysis("doc6", blob(LARGE, seed=9))
    await mongo.analysis_parts.delete_one({"_id": "doc6:1"})
    with pytest.raises(RuntimeError, match=r"doc6 has incomplete page analysis .*index the document again"):
        await mongo.get_analysis("doc6")


@pytest.mark.integration
async def test_mongo_deletion_removes_the_head_and_every_part(mongo: MongoRepository) -> None:
    await mongo.put_indexed(document("doc7", blob(LARGE, seed=10)))
    # Parts of a later write that died before its head: found by their numbers alone.
    await mongo.analysis_parts.insert_one({"_id": "doc7:3", "doc_id": "doc7", "data": b"left over"})
    assert await stored_parts(mongo, "doc7") == part_ids("doc7", 4)

    assert await mongo.delete_document("doc7")
    assert await mongo.analysis.find_one({"_id": "doc7"}) is None
    assert await stored_parts(mongo, "doc7") == []
    assert await mongo.get_analysis("doc7") is None


@pytest.mark.integration
async def test_mongo_vectors_still_round_trip_through_the_shared_parts(mongo: MongoRepository) -> None:
    rng = np.random.default_rng(11)
    vectors = DocumentEmbeddings.from_arrays("doc8", "test:random", rng.normal(size=(30, 8)).astype(np.float32),
                                             ["0001", "0002"], rng.normal(size=(2, 8)).astype(np.float32))
    await mongo.put_embeddings(vectors)
    assert await mongo.get_embeddings("doc8") == vectors
    head = await mongo.embeddings.find_one({"_id": "doc8"})
    assert head is not None and head["bytes"] == len(vectors.page_vectors) + len(vectors.node_vectors)
    await mongo.delete_embeddings("doc8")
    assert await mongo.get_embeddings("doc8") is None
    assert await mongo.embedding_parts.find_one({"_id": "doc8:0"}) is None
