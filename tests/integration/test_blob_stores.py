"""Where uploaded files' bytes are kept: a folder, or GridFS on the real FerretDB; and the
repository reading through either."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from gridfs import AsyncGridFSBucket

from shared.adapters.blobs import make_blob_store
from shared.adapters.blobs.folder import BlobKeyError, FolderBlobs
from shared.adapters.mongo import blobs as gridfs_blobs
from shared.adapters.mongo.blobs import GridFsBlobs
from shared.adapters.mongo.store import MongoRepository, connect
from shared.model.documents import DocumentRecord
from shared.settings import Settings

pytestmark = pytest.mark.integration

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 20


@pytest.fixture
async def db(infra: Any) -> AsyncIterator[Any]:
    client = connect(infra.mongo_url)
    name = f"blobs_{uuid.uuid4().hex[:8]}"
    yield client[name]
    await client.drop_database(name)
    await client.close()


async def test_gridfs_bytes_round_trip_in_several_chunks_and_are_stored_once(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gridfs_blobs, "CHUNK_BYTES", 1000)
    blobs = GridFsBlobs(db)
    await blobs.put("pdf1", PDF)
    await blobs.put("pdf1", PDF)
    assert await blobs.get("pdf1") == PDF
    bucket = gridfs_blobs.bucket_name("pdf1")
    assert await db[f"{bucket}.chunks"].count_documents({"files_id": "pdf1"}) == 6
    # GridFS's own reader finds the same bytes.
    stream = await AsyncGridFSBucket(db, bucket_name=bucket).open_download_stream("pdf1")
    assert await stream.read() == PDF
    assert await blobs.get("missing") is None
    await blobs.delete("pdf1")
    assert await blobs.get("pdf1") is None
    assert await db[f"{bucket}.chunks"].count_documents({}) == 0


async def test_a_file_written_by_a_standard_gridfs_client_is_read(db: Any) -> None:
    blobs = GridFsBlobs(db)
    own = AsyncGridFSBucket(db, bucket_name=gridfs_blobs.bucket_name("pdf2"))
    await own.upload_from_stream_with_id("pdf2", "pdf2.pdf", PDF, chunk_size_bytes=512)
    assert await blobs.get("pdf2") == PDF
    # and one stored in the single `pdfs` bucket of earlier releases
    await AsyncGridFSBucket(db, bucket_name="pdfs").upload_from_stream_with_id("pdf3", "pdf3.pdf", PDF[:999])
    assert await blobs.get("pdf3") == PDF[:999]


def test_gridfs_files_spread_over_buckets() -> None:
    names = {gridfs_blobs.bucket_name(f"{n:016x}") for n in range(200)}
    assert len(names) == gridfs_blobs.BUCKETS and all(n.startswith("pdfs.") for n in names)


async def test_folder_bytes_round_trip_and_a_second_put_keeps_the_first(tmp_path: Path) -> None:
    blobs = FolderBlobs(tmp_path / "blobs")
    await blobs.put("abcdef0123", PDF)
    await blobs.put("abcdef0123", b"other bytes under the same key")
    assert await blobs.get("abcdef0123") == PDF
    assert await FolderBlobs(tmp_path / "blobs").get("abcdef0123") == PDF  # another process
    assert await blobs.get("missing00") is None
    await blobs.delete("abcdef0123")
    await blobs.delete("abcdef0123")
    assert await blobs.get("abcdef0123") is None
    # Nothing half-written is left behind.
    assert [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("key", ["../escape", "a/b", "", ".hidden", "x" * 300])
async def test_a_folder_key_that_could_leave_the_folder_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(BlobKeyError):
        await FolderBlobs(tmp_path).put(key, PDF)


async def test_the_setting_picks_the_store(db: Any, tmp_path: Path) -> None:
    assert make_blob_store(Settings(blob_dir=tmp_path), db).scheme == "file"
    assert make_blob_store(Settings(blob_dir=None), db).scheme == "gridfs"


async def test_a_repository_on_a_folder_keeps_pdfs_out_of_the_store_and_still_reads_earlier_ones(
    db: Any, tmp_path: Path
) -> None:
    repo = MongoRepository(db.client, db.name, owns_client=False, blobs=FolderBlobs(tmp_path))
    await repo.ensure_indexes()
    await repo.put_pdf("newdoc0001", PDF)
    assert await repo.get_pdf("newdoc0001") == PDF
    assert not [name for name in await db.list_collection_names() if name.startswith("pdfs")]
    # Uploaded while the deployment kept files in GridFS.
    await GridFsBlobs(db).put("olddoc0001", PDF[:500])
    assert await repo.get_pdf("olddoc0001") == PDF[:500]
    # Deleting a document removes its file wherever it is.
    for doc_id in ("newdoc0001", "olddoc0001"):
        await repo.put_document(DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf"))
        assert await repo.delete_document(doc_id)
        assert await repo.get_pdf(doc_id) is None
