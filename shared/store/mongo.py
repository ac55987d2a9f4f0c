"""The repository on MongoDB (or FerretDB) through PyMongo's own async API.

PyMongo's `AsyncMongoClient` is used rather than Motor, which MongoDB has deprecated.
Everything here runs on MongoDB 7/8 and on FerretDB 1.24: no transactions, change streams,
TTL indexes or `$lookup`; old rows are cleaned up by the application.

Collections (database `settings.mongo_db`):
- `documents`  one record per document, `_id` = doc_id
- `pages`      one row per page, `_id` = "<doc_id>:<n>" (a page per row keeps every row far
               below the 16 MB BSON limit however long the PDF is)
- `trees`      one tree per document, `_id` = doc_id (so a rebuild replaces, never duplicates)
- `cache`      `_id` = "<namespace>:<sha256(key)>"
- GridFS bucket `pdfs` for the PDF bytes, file id = doc_id
"""

from __future__ import annotations

import hashlib
import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from gridfs import AsyncGridFSBucket
from gridfs.errors import NoFile
from pymongo import ASCENDING, AsyncMongoClient, ReplaceOne
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from shared.documents import DocumentRecord, DocumentStatus, DocumentTree, IndexedDocument

logger = logging.getLogger(__name__)

PAGE_BATCH = 500


def connect(url: str, **options: Any) -> AsyncMongoClient[dict[str, Any]]:
    """A client that returns timezone-aware datetimes and fails fast when the server is down."""
    options.setdefault("serverSelectionTimeoutMS", 10_000)
    options.setdefault("connectTimeoutMS", 5_000)
    return AsyncMongoClient(url, tz_aware=True, **options)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _record_doc(record: DocumentRecord) -> dict[str, Any]:
    doc = record.model_dump(mode="json")
    doc["_id"] = record.doc_id
    return doc


def _record_from(doc: dict[str, Any]) -> DocumentRecord:
    doc = {k: v for k, v in doc.items() if k != "_id"}
    return DocumentRecord.model_validate(doc)


class MongoRepository:
    """The async `Repository` (shared/store/base.py) on a MongoDB-protocol server."""

    def __init__(
        self,
        client: AsyncMongoClient[dict[str, Any]],
        db_name: str = "treerag",
        *,
        owns_client: bool = True,
    ) -> None:
        self.client = client
        self.db: AsyncDatabase[dict[str, Any]] = client[db_name]
        self.documents = self.db["documents"]
        self.pages = self.db["pages"]
        self.trees = self.db["trees"]
        self.cache = self.db["cache"]
        self.pdfs = AsyncGridFSBucket(self.db, bucket_name="pdfs")
        self._owns_client = owns_client

    @classmethod
    def from_url(cls, url: str, db_name: str = "treerag") -> MongoRepository:
        return cls(connect(url), db_name)

    async def ensure_indexes(self) -> None:
        """Idempotent; every service calls it at start."""
        await self.documents.create_index([("file_name", ASCENDING)])
        await self.documents.create_index([("status", ASCENDING)])
        await self.documents.create_index([("tenant", ASCENDING), ("created_at", ASCENDING)])
        await self.pages.create_index([("doc_id", ASCENDING), ("n", ASCENDING)], unique=True)
        await self.cache.create_index([("namespace", ASCENDING), ("at", ASCENDING)])

    async def ping(self) -> None:
        await self.client.admin.command("ping")

    # ------------------------------------------------------------ documents

    async def put_document(self, record: DocumentRecord) -> None:
        record = record.model_copy(update={"updated_at": _utc_now()})
        await self.documents.replace_one({"_id": record.doc_id}, _record_doc(record), upsert=True)

    async def get_document(self, doc_id: str) -> DocumentRecord | None:
        doc = await self.documents.find_one({"_id": doc_id})
        return _record_from(doc) if doc else None

    async def list_documents(self) -> list[DocumentRecord]:
        docs = await self.documents.find({}).to_list()
        records = [_record_from(d) for d in docs]
        return sorted(records, key=lambda r: (r.file_name, r.doc_id))

    async def find_document(self, key: str) -> DocumentRecord | None:
        exact = await self.get_document(key)
        if exact:
            return exact
        docs = await self.documents.find({"_id": {"$regex": "^" + re.escape(key)}}).to_list(2)
        if not docs:
            docs = await self.documents.find({"file_name": key}).to_list(2)
        if not docs:
            stem = key.rsplit("/", 1)[-1]
            docs = await self.documents.find(
                {"file_name": {"$regex": "^" + re.escape(stem) + r"\.pdf$", "$options": "i"}}
            ).to_list(2)
        return _record_from(docs[0]) if len(docs) == 1 else None

    async def set_status(
        self, doc_id: str, status: DocumentStatus, reason: str | None = None, **fields: Any
    ) -> bool:
        """Set the status (and reason) without rewriting the record; False when it is missing."""
        update = {"status": status.value, "reason": reason, "updated_at": _utc_now().isoformat(), **fields}
        result = await self.documents.update_one({"_id": doc_id}, {"$set": update})
        return result.matched_count == 1

    # ------------------------------------------------------------ pages

    async def put_pages(self, doc_id: str, pages: list[str]) -> None:
        ops = [
            ReplaceOne({"_id": f"{doc_id}:{n}"}, {"_id": f"{doc_id}:{n}", "doc_id": doc_id, "n": n, "text": text}, upsert=True)
            for n, text in enumerate(pages, start=1)
        ]
        for start in range(0, len(ops), PAGE_BATCH):
            await self.pages.bulk_write(ops[start : start + PAGE_BATCH], ordered=False)
        # A rebuilt document may be shorter than before: drop the pages past its end.
        await self.pages.delete_many({"doc_id": doc_id, "n": {"$gt": len(pages)}})

    async def get_pages(self, doc_id: str) -> list[str]:
        rows = await self.pages.find({"doc_id": doc_id}, {"n": 1, "text": 1}).sort("n", ASCENDING).to_list()
        return [row["text"] for row in rows]

    async def get_page(self, doc_id: str, number: int) -> str | None:
        row = await self.pages.find_one({"_id": f"{doc_id}:{number}"}, {"text": 1})
        return row["text"] if row else None

    # ------------------------------------------------------------ trees

    async def put_tree(self, tree: DocumentTree) -> None:
        doc = tree.model_dump(mode="json")
        doc["_id"] = tree.doc_id
        await self.trees.replace_one({"_id": tree.doc_id}, doc, upsert=True)

    async def get_tree(self, doc_id: str) -> DocumentTree | None:
        doc = await self.trees.find_one({"_id": doc_id})
        if not doc:
            return None
        doc.pop("_id", None)
        return DocumentTree.model_validate(doc)

    async def count_trees(self, doc_id: str) -> int:
        return await self.trees.count_documents({"doc_id": doc_id})

    # ------------------------------------------------------------ PDF bytes

    async def put_pdf(self, doc_id: str, data: bytes) -> None:
        """Stored once per doc_id (the id is a hash of the bytes, so a second copy is the same)."""
        if await self.db["pdfs.files"].find_one({"_id": doc_id}, {"_id": 1}):
            return
        # Chunks of an upload that died before its files row was written would collide.
        await self.db["pdfs.chunks"].delete_many({"files_id": doc_id})
        try:
            await self.pdfs.upload_from_stream_with_id(doc_id, f"{doc_id}.pdf", data)
        except DuplicateKeyError:
            logger.info("pdf already stored by a concurrent upload", extra={"fields": {"doc_id": doc_id}})

    async def get_pdf(self, doc_id: str) -> bytes | None:
        try:
            stream = await self.pdfs.open_download_stream(doc_id)
        except NoFile:
            return None
        return await stream.read()

    # ------------------------------------------------------------ indexing result

    async def put_indexed(self, indexed: IndexedDocument) -> None:
        await self.put_pages(indexed.record.doc_id, indexed.pages)
        await self.put_tree(indexed.tree)
        await self.put_document(indexed.record)

    # ------------------------------------------------------------ cache

    @staticmethod
    def _cache_id(namespace: str, key: str) -> str:
        return f"{namespace}:{hashlib.sha256(key.encode()).hexdigest()}"

    async def get_cached(self, namespace: str, key: str) -> dict[str, Any] | None:
        doc = await self.cache.find_one({"_id": self._cache_id(namespace, key)})
        return doc["value"] if doc else None

    async def put_cached(self, namespace: str, key: str, value: dict[str, Any]) -> None:
        cid = self._cache_id(namespace, key)
        await self.cache.replace_one(
            {"_id": cid}, {"_id": cid, "namespace": namespace, "value": value, "at": _utc_now()}, upsert=True
        )

    async def purge_cache(self, older_than: timedelta) -> int:
        """TTL indexes are not available on FerretDB: expired rows are deleted here."""
        result = await self.cache.delete_many({"at": {"$lt": _utc_now() - older_than}})
        return result.deleted_count

    async def close(self) -> None:
        if self._owns_client:
            await self.client.close()
