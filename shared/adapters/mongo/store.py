"""The repository on MongoDB (or FerretDB) through PyMongo's own async API.

PyMongo's `AsyncMongoClient` is used rather than Motor, which MongoDB has deprecated.
Everything here runs on MongoDB 7/8 and on FerretDB 1.24: no transactions, change streams,
TTL indexes or `$lookup`; old rows are cleaned up by the application.

Collections (database `settings.mongo_db`):
- `documents`  one record per document, `_id` = doc_id
- `page_chunks` the page texts in a few rows per document, `_id` = "<doc_id>:<chunk>" (at most
               `PAGES_PER_CHUNK` pages and `CHUNK_BYTES` bytes each, far below the 16 MB BSON
               limit however long the PDF is); chunk 0 also lists where every chunk starts
- `trees`      one tree per document, `_id` = doc_id (so a rebuild replaces, never duplicates)
- `documents_stamp` one row counting writes to `documents` (see `list_documents`)
- `counters`   the last listing position given out (`_id` = "order")
- `document_order` one row per listing position, `_id` = the zero-padded position, naming the
               document placed there (see listing.py: pages of the listing by `_id` lookups)
- `embeddings` one small row per document with vectors, `_id` = doc_id: model, dimension, node
               ids, the vectors' length in bytes and how many parts hold them
- `embedding_parts` the packed float16 vectors (pages, then nodes), `_id` = "<doc_id>:<part>",
               at most `CHUNK_BYTES` each; kept apart from `embeddings` so that reading a head
               never scans vector bytes on FerretDB
- `analysis`   one small row per document with a page analysis (shared/text/page_analysis.py),
               `_id` = doc_id: its length in bytes and how many parts hold it
- `analysis_parts` the analysis bytes, `_id` = "<doc_id>:<part>", at most `CHUNK_BYTES` each
               (about 30 MB for a 2,400-page manual: beyond the 16 MB BSON limit in one row)
- `text_layers` one row per document with pages recognised by OCR, `_id` = doc_id, listing them
               (`pages`); `text_layer_pages` one row per such page, `_id` = "<doc_id>:<page>",
               its words and their boxes (`shared/model/text_layer.py`), read one page at a time
- `cache.<h>`  `_id` = "<namespace>:<sha256(key)>", `refs` = the doc ids the value was made
               from, spread over CACHE_BUCKETS collections by the first hex digit <h> of the hash
               (see below); each row's id is noted in the ledger `owned.<doc_id>.cache` of every
               document it refers to, so the document's deletion finds it by `_id` (ownership.py)
- PDF bytes: in the blob store the repository is given (shared/ports/blobs.py); by default
               GridFS buckets `pdfs.<h>` in this database (see blobs.py)

Every hot read and write is an `_id` lookup or an insert. FerretDB 1.24 on SQLite pushes only
`_id` equality down to SQLite; any other filter, range or sort reads the whole collection. Released
FerretDB even scans for `_id` (it compares `_ferretdb_sjson->'$._id'` while the unique index is on
`_ferretdb_sjson->"_id"`); the build of scripts/infra/ferretdb patches that, so a lookup searches
the index and costs the same at 10 or 10,000 documents (bench/store_scale.py). So: rows are
written once with inserts where possible and updated only on rare paths (rebuilds); what is read
per document (pages, trees) is read once per tree version and kept in memory by the stages; the
listing is read by position (listing.py). MongoDB serves the same lookups from its index.

A deletion (shared/app/deletion.py) first sets the record's status to `deleting` (one update by
`_id`); `get_document`, `list_documents`, `find_document` and the listing treat such a record as
gone from then on, and `delete_document` removes the rest by `_id`, the record last.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import itertools
import logging
import re
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from pymongo import ASCENDING, AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import BulkWriteError, DuplicateKeyError

from shared.adapters.mongo.blobs import GridFsBlobs
from shared.adapters.mongo.listing import POSITION_FIELD, DocumentOrder
from shared.adapters.mongo.ownership import Owned, OwnershipLedger, remove_each
from shared.app.indexing import store_indexed
from shared.model.clock import utc_now
from shared.model.documents import (
    DocumentEmbeddings,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.ids import DEFAULT_TENANT
from shared.model.listing import DocumentPage
from shared.model.lru import Lru
from shared.model.text_layer import TextLayer
from shared.ports.blobs import BlobStore
from shared.ports.repository import DocumentBeingDeleted

logger = logging.getLogger(__name__)

PAGES_PER_CHUNK = 200
CHUNK_BYTES = 4 * 1024 * 1024
DUPLICATE_KEY = 11000
# The navigator reads the answer cache on every query; on FerretDB a read scans its collection,
# so the rows are spread over this many collections (a sixteenth of the scan each).
CACHE_BUCKETS = 16
STAMP_ID = "documents"
# Tenants whose ready records `ready_documents` keeps between writes (a listing each).
READY_LISTINGS_KEPT = 256


def page_chunks(pages: list[str]) -> list[list[str]]:
    """Consecutive pages grouped so that no group exceeds PAGES_PER_CHUNK pages or CHUNK_BYTES."""
    chunks: list[list[str]] = [[]]
    size = 0
    for text in pages:
        length = len(text.encode("utf-8"))
        if chunks[-1] and (len(chunks[-1]) >= PAGES_PER_CHUNK or size + length > CHUNK_BYTES):
            chunks.append([])
            size = 0
        chunks[-1].append(text)
        size += length
    return chunks if chunks[-1] else []


def _only_duplicates(exc: BulkWriteError) -> bool:
    errors = exc.details.get("writeErrors", [])
    return bool(errors) and all(e.get("code") == DUPLICATE_KEY for e in errors)


def connect(url: str, **options: Any) -> AsyncMongoClient[dict[str, Any]]:
    """A client that returns timezone-aware datetimes and fails fast when the server is down."""
    options.setdefault("serverSelectionTimeoutMS", 10_000)
    options.setdefault("connectTimeoutMS", 5_000)
    return AsyncMongoClient(url, tz_aware=True, **options)


def _record_doc(record: DocumentRecord) -> dict[str, Any]:
    doc = record.model_dump(mode="json")
    doc["_id"] = record.doc_id
    return doc


def _record_from(doc: dict[str, Any]) -> DocumentRecord:
    doc = {k: v for k, v in doc.items() if k != "_id"}
    return DocumentRecord.model_validate(doc)


def _readable(doc: dict[str, Any] | None) -> bool:
    """A stored record a reader may see: not one whose deletion has started."""
    return doc is not None and doc.get("status") != DocumentStatus.DELETING.value


class _PartedBytes:
    """Bytes of one kind per document in two collections: a small head row (`_id` = doc_id,
    with `bytes`, the length, and `parts`, how many part rows hold them) in `heads`, and the
    bytes in `parts` rows `<doc_id>:<k>` of at most `CHUNK_BYTES` each. Parts are written first
    and the head last, so a reader never follows a head to a missing part; a rebuild replaces
    the head and drops parts past the new end. `what` names the bytes in errors."""

    def __init__(self, heads: Any, parts: Any, what: str) -> None:
        self.heads = heads
        self.parts = parts
        self.what = what

    async def put(self, doc_id: str, data: bytes, fields: dict[str, Any] | None = None) -> None:
        """`fields`: what the head row holds besides the length and the number of parts."""
        rows = [
            {"_id": f"{doc_id}:{k}", "doc_id": doc_id, "data": data[start : start + CHUNK_BYTES]}
            for k, start in enumerate(range(0, len(data), CHUNK_BYTES))
        ]
        head = {**(fields or {}), "_id": doc_id, "bytes": len(data), "parts": len(rows)}
        await _insert_or_replace(self.parts, rows)
        try:
            await self.heads.insert_one(head)
            return
        except DuplicateKeyError:
            pass
        previous = await self.heads.find_one({"_id": doc_id}, {"parts": 1})
        await self.heads.replace_one({"_id": doc_id}, head, upsert=True)
        old_count = int(previous.get("parts", 0)) if previous else 0
        stale = [f"{doc_id}:{k}" for k in range(len(rows), old_count)]
        if stale:
            await self.parts.delete_many({"_id": {"$in": stale}})

    async def get(self, doc_id: str) -> tuple[dict[str, Any], bytes] | None:
        """The head's other fields and the bytes; None when no head is stored. Raises when a
        part is missing or the parts do not add up to the stored length."""
        head = await self.heads.find_one({"_id": doc_id})
        if head is None:
            return None
        count = int(head["parts"])
        rows = await asyncio.gather(
            *(self.parts.find_one({"_id": f"{doc_id}:{k}"}, {"data": 1}) for k in range(count))
        )
        data = b"".join(bytes(row["data"]) for row in rows if row is not None)
        # Heads of vectors written before heads held `bytes` are checked by their parts alone.
        length = head.get("bytes")
        if any(row is None for row in rows) or (length is not None and len(data) != int(length)):
            found = sum(row is not None for row in rows)
            expected = f"{int(length)} bytes" if length is not None else "bytes"
            raise RuntimeError(
                f"document {doc_id} has incomplete {self.what} ({found} of {count} parts, {len(data)} of "
                f"{expected}); index the document again (upload with rebuild)"
            )
        return {k: v for k, v in head.items() if k not in ("_id", "bytes", "parts")}, data

    async def delete(self, doc_id: str) -> None:
        """The head, then the parts it names."""
        head = await self.heads.find_one({"_id": doc_id}, {"parts": 1})
        if head is None:
            return
        await self.heads.delete_one({"_id": doc_id})
        parts = [f"{doc_id}:{k}" for k in range(int(head.get("parts", 0)))]
        if parts:
            await self.parts.delete_many({"_id": {"$in": parts}})

    async def remove(self, doc_id: str) -> None:
        """For a document's deletion: the head, then every part from 0 on by `_id`, also those of a
        write that died before its head (`_delete_numbered`)."""
        await self.heads.delete_one({"_id": doc_id})
        await _delete_numbered(self.parts, doc_id)


async def _insert_or_replace(collection: Any, rows: list[dict[str, Any]]) -> None:
    """Insert rows; a row already there (left by an attempt that died midway) is replaced."""
    if not rows:
        return
    try:
        await collection.insert_many(rows, ordered=False)
    except BulkWriteError as exc:
        if not _only_duplicates(exc):
            raise
        taken = {rows[e["index"]]["_id"] for e in exc.details["writeErrors"]}
        for row in rows:
            if row["_id"] in taken:
                await collection.replace_one({"_id": row["_id"]}, row, upsert=True)


async def _delete_numbered(collection: Any, doc_id: str) -> None:
    """Rows `<doc_id>:0`, `<doc_id>:1`, ... up to the first missing one (they are written
    from 0 on, so this also finds the parts of a write that died before its head), deleted
    from the last: a deletion stopped midway leaves a run from 0 that the next one finds."""
    count = 0
    while await collection.find_one({"_id": f"{doc_id}:{count}"}, {"_id": 1}) is not None:
        count += 1
    for number in reversed(range(count)):
        await collection.delete_one({"_id": f"{doc_id}:{number}"})


class MongoRepository:
    """The async `Repository` (shared/ports/repository.py) on a MongoDB-protocol server."""

    def __init__(
        self,
        client: AsyncMongoClient[dict[str, Any]],
        db_name: str = "treerag",
        *,
        owns_client: bool = True,
        blobs: BlobStore | None = None,
    ) -> None:
        """`blobs`: where PDF bytes go (default: GridFS in this database)."""
        self.client = client
        self.db: AsyncDatabase[dict[str, Any]] = client[db_name]
        self.documents = self.db["documents"]
        self.page_chunks = self.db["page_chunks"]
        self.trees = self.db["trees"]
        self.documents_stamp = self.db["documents_stamp"]
        self.embeddings = self.db["embeddings"]
        self.embedding_parts = self.db["embedding_parts"]
        self.analysis = self.db["analysis"]
        self.analysis_parts = self.db["analysis_parts"]
        self._vectors = _PartedBytes(self.embeddings, self.embedding_parts, "vectors")
        self._analysis = _PartedBytes(self.analysis, self.analysis_parts, "page analysis")
        self.text_layers = self.db["text_layers"]
        self.text_layer_pages = self.db["text_layer_pages"]
        self.order = DocumentOrder(self.db["counters"], self.db["document_order"], self.documents)
        self.owned = OwnershipLedger(self.db)
        # The last full listing and the write stamp it was read under (see `list_documents`).
        self._listing: tuple[tuple[str, int, int], list[DocumentRecord]] | None = None
        # Each tenant's ready records and the write stamp they were read under, the tenants
        # asked last kept (see `ready_documents`).
        self._ready: Lru[str, tuple[tuple[str, int, int], list[DocumentRecord]]] = Lru(READY_LISTINGS_KEPT)
        self.gridfs = GridFsBlobs(self.db)
        self.blobs: BlobStore = blobs if blobs is not None else self.gridfs
        self._owns_client = owns_client

    @classmethod
    def from_url(cls, url: str, db_name: str = "treerag", blobs: BlobStore | None = None) -> MongoRepository:
        return cls(connect(url), db_name, blobs=blobs)

    async def ensure_indexes(self) -> None:
        """Idempotent; every service calls it at start."""
        await self.documents.create_index([("file_name", ASCENDING)])
        await self.documents.create_index([("status", ASCENDING)])
        await self.documents.create_index([("tenant", ASCENDING), ("created_at", ASCENDING)])
        await self.documents.create_index([("tenant", ASCENDING), ("status", ASCENDING)])
        await self.page_chunks.create_index([("doc_id", ASCENDING)])
        for bucket in self._cache_buckets():
            await bucket.create_index([("namespace", ASCENDING), ("at", ASCENDING)])
        placed = await self.order.backfill()
        if placed:
            logger.info("listing positions given to earlier documents", extra={"fields": {"documents": placed}})

    async def ping(self) -> None:
        await self.client.admin.command("ping")

    # ------------------------------------------------------------ documents

    @asynccontextmanager
    async def _changing_documents(self) -> AsyncIterator[None]:
        """Bracket a write to `documents` with the stamp's `started`/`finished` counters.

        `started` goes up before the write, so anyone who can see the write also sees a stamp
        that differs from every stamp a listing without it was cached under."""
        started = {"$inc": {"started": 1}, "$setOnInsert": {"epoch": secrets.token_hex(8)}}
        try:
            await self.documents_stamp.update_one({"_id": STAMP_ID}, started, upsert=True)
        except DuplicateKeyError:
            # Two first writes both tried to create the row and this one lost: it exists now.
            await self.documents_stamp.update_one({"_id": STAMP_ID}, started, upsert=True)
        try:
            yield
        finally:
            await self.documents_stamp.update_one({"_id": STAMP_ID}, {"$inc": {"finished": 1}})

    async def _settled_stamp(self) -> tuple[str, int, int] | None:
        """The write stamp, or None while a write is in progress (or one died half-way)."""
        doc = await self.documents_stamp.find_one({"_id": STAMP_ID})
        if doc is None:
            return ("", 0, 0)
        started, finished = int(doc.get("started", 0)), int(doc.get("finished", 0))
        return (str(doc.get("epoch", "")), started, finished) if started == finished else None

    async def put_document(self, record: DocumentRecord) -> None:
        """A new document also gets the next listing position (see listing.py)."""
        record = record.model_copy(update={"updated_at": utc_now()})
        doc = _record_doc(record)
        stored = await self.documents.find_one({"_id": record.doc_id}, {POSITION_FIELD: 1, "status": 1})
        if stored is not None and not _readable(stored):
            raise DocumentBeingDeleted(record.doc_id)
        position = stored.get(POSITION_FIELD) if stored is not None else None
        doc[POSITION_FIELD] = int(position) if position is not None else await self.order.allocate(record.tenant,
                                                                                                   record.doc_id)
        async with self._changing_documents():
            await self.documents.replace_one({"_id": record.doc_id}, doc, upsert=True)

    async def list_page(self, tenant: str, limit: int, before: int | None = None,
                        status: DocumentStatus | None = None) -> DocumentPage:
        """The tenant's records, newest first, `limit` below position `before` (None: from the
        newest); every read is an `_id` lookup, so a page costs the same whatever the store holds."""
        rows, next_position = await self.order.page(tenant, limit, before, status, _readable)
        return DocumentPage(records=[_record_from(row) for row in rows], next_position=next_position)

    async def get_document(self, doc_id: str) -> DocumentRecord | None:
        doc = await self.documents.find_one({"_id": doc_id})
        return _record_from(doc) if doc is not None and _readable(doc) else None

    async def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord | None]:
        """One `$in` query on `_id` (MongoDB serves it from the `_id` index; FerretDB reads the
        collection once, where a look-up per document would cost a round trip each)."""
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, DocumentRecord | None] = dict.fromkeys(wanted)
        if wanted:
            for doc in await self.documents.find({"_id": {"$in": wanted}}).to_list(None):
                if _readable(doc):
                    found[str(doc["_id"])] = _record_from(doc)
        return found

    async def list_documents(self) -> list[DocumentRecord]:
        """Every record, sorted by file name. The navigator lists on every query without doc ids
        and on FerretDB that read scans the whole collection, so the listing is kept and reused
        while the one-row write stamp is unchanged (a write by any process changes it first).
        The records are shared with later calls: copy one before changing it."""
        before = await self._settled_stamp()
        if before is not None and self._listing is not None and self._listing[0] == before:
            return list(self._listing[1])
        docs = await self.documents.find({}).to_list()
        records = sorted((_record_from(d) for d in docs if _readable(d)), key=lambda r: (r.file_name, r.doc_id))
        # Kept only if no write started or finished while reading.
        if before is not None and before == await self._settled_stamp():
            self._listing = (before, records)
        return list(records)

    async def ready_documents(self, tenant: str) -> list[DocumentRecord]:
        """The tenant's ready records, by doc id, read with the tenant and status as the query
        (MongoDB serves it from the (tenant, status) index; FerretDB reads the collection).
        Kept per tenant while the write stamp is unchanged, as `list_documents` keeps its
        listing; the `READY_LISTINGS_KEPT` tenants asked last are kept."""
        before = await self._settled_stamp()
        kept = self._ready.get(tenant)
        if before is not None and kept is not None and kept[0] == before:
            return list(kept[1])
        # A record stored before tenants existed has no tenant field: it is the default tenant's.
        owner: Any = {"$in": [tenant, None]} if tenant == DEFAULT_TENANT else tenant
        docs = await self.documents.find({"tenant": owner, "status": DocumentStatus.READY.value}).to_list()
        records = sorted((_record_from(d) for d in docs if _readable(d)), key=lambda r: r.doc_id)
        if before is not None and before == await self._settled_stamp():
            self._ready.put(tenant, (before, records))
        return list(records)

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
        docs = [d for d in docs if _readable(d)]
        return _record_from(docs[0]) if len(docs) == 1 else None

    async def set_status(
        self, doc_id: str, status: DocumentStatus, reason: str | None = None, **fields: Any
    ) -> bool:
        """Set the status (and reason) without rewriting the record; False when it is missing or
        being deleted."""
        if not await self.stored_readable(doc_id):
            return False
        update = {"status": status.value, "reason": reason, "updated_at": utc_now().isoformat(), **fields}
        async with self._changing_documents():
            result = await self.documents.update_one({"_id": doc_id}, {"$set": update})
        return result.matched_count == 1

    async def stored_readable(self, doc_id: str) -> bool:
        return _readable(await self.documents.find_one({"_id": doc_id}, {"status": 1}))

    async def begin_deletion(self, doc_id: str) -> DocumentRecord | None:
        """Read, then one update by `_id` alone (a second condition would scan on FerretDB): two
        deletions racing may both start it, and finishing twice is harmless."""
        doc = await self.documents.find_one({"_id": doc_id})
        if doc is None or not _readable(doc):
            return None
        update = {"status": DocumentStatus.DELETING.value, "updated_at": utc_now().isoformat()}
        async with self._changing_documents():
            result = await self.documents.update_one({"_id": doc_id}, {"$set": update})
        return _record_from(doc) if result.matched_count == 1 else None

    async def being_deleted(self, doc_id: str) -> bool:
        doc = await self.documents.find_one({"_id": doc_id}, {"status": 1})
        return doc is not None and not _readable(doc)

    async def deleting_documents(self) -> list[DocumentRecord]:
        """A filter on `status` (a scan of `documents` on FerretDB: one row per document, not per
        query); read when a gateway starts."""
        docs = await self.documents.find({"status": DocumentStatus.DELETING.value}).to_list(None)
        return [_record_from(doc) for doc in docs]

    async def owned_leftovers(self) -> list[str]:
        """Doc ids with no record whose ledgers still name rows: a query or cached answer stored
        by a stage that was still working on the document when its deletion finished."""
        ledgers = await self.owned.documents()
        records = await asyncio.gather(*(self.documents.find_one({"_id": d}, {"_id": 1}) for d in sorted(ledgers)))
        return [d for d, record in zip(sorted(ledgers), records, strict=True) if record is None]

    # ------------------------------------------------------------ pages

    @staticmethod
    def _chunk_id(doc_id: str, chunk: int) -> str:
        return f"{doc_id}:{chunk}"

    async def put_pages(self, doc_id: str, pages: list[str]) -> None:
        """All pages of a document, replacing the earlier ones. Chunk 0 (the one listing the
        others) is written last, so a reader never follows it to a chunk not yet stored."""
        groups = page_chunks(pages)
        starts = list(itertools.accumulate([1] + [len(g) for g in groups[:-1]])) if groups else []
        rows = [
            {"_id": self._chunk_id(doc_id, k), "doc_id": doc_id, "chunk": k, "first": starts[k], "texts": group}
            for k, group in enumerate(groups)
        ]
        head = {"_id": self._chunk_id(doc_id, 0), "doc_id": doc_id, "chunk": 0, "first": 1,
                "texts": groups[0] if groups else [], "chunks": len(groups), "page_count": len(pages),
                "starts": starts}
        # Inserts first: a new document (the usual case) costs no read, which on FerretDB would
        # scan every stored page. A leftover of an attempt that died midway is replaced.
        await _insert_or_replace(self.page_chunks, rows[1:])
        try:
            await self.page_chunks.insert_one(head)
            return
        except DuplicateKeyError:
            pass
        # A rebuild (rare): replace the list of chunks, then drop chunks past the new end.
        previous = await self.page_chunks.find_one({"_id": head["_id"]}, {"chunks": 1})
        await self.page_chunks.replace_one({"_id": head["_id"]}, head, upsert=True)
        old_count = int(previous.get("chunks", 0)) if previous else 0
        stale = [self._chunk_id(doc_id, k) for k in range(max(len(groups), 1), old_count)]
        if stale:
            await self.page_chunks.delete_many({"_id": {"$in": stale}})

    async def _page_head(self, doc_id: str) -> dict[str, Any] | None:
        return await self.page_chunks.find_one({"_id": self._chunk_id(doc_id, 0)})

    async def _chunk_texts(self, doc_id: str, head: dict[str, Any], chunks: list[int]) -> dict[int, list[str]]:
        """Texts of the given chunks, one `_id` lookup each (`$in` scans on FerretDB)."""
        found: dict[int, list[str]] = {0: head["texts"]} if 0 in chunks else {}
        others = [k for k in chunks if k != 0]
        rows = await asyncio.gather(
            *(self.page_chunks.find_one({"_id": self._chunk_id(doc_id, k)}, {"texts": 1}) for k in others)
        )
        for k, row in zip(others, rows, strict=True):
            if row is None:
                raise RuntimeError(
                    f"page chunk {k} of document {doc_id} is missing; index the document again (upload with rebuild)"
                )
            found[k] = row["texts"]
        return found

    async def get_pages(self, doc_id: str) -> list[str]:
        head = await self._page_head(doc_id)
        if head is None:
            return []
        texts = await self._chunk_texts(doc_id, head, list(range(int(head["chunks"]))))
        return [text for k in sorted(texts) for text in texts[k]]

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]:
        """Texts of the given 1-based pages (missing numbers are left out), reading only the
        chunks that hold them."""
        head = await self._page_head(doc_id)
        if head is None:
            return {}
        starts: list[int] = head["starts"]
        wanted = sorted({n for n in numbers if 1 <= n <= int(head["page_count"])})
        by_chunk = {n: bisect.bisect_right(starts, n) - 1 for n in wanted}
        texts = await self._chunk_texts(doc_id, head, sorted(set(by_chunk.values())))
        return {n: texts[k][n - starts[k]] for n, k in by_chunk.items()}

    async def get_page(self, doc_id: str, number: int) -> str | None:
        return (await self.get_page_texts(doc_id, [number])).get(number)

    # ------------------------------------------------------------ trees

    async def put_tree(self, tree: DocumentTree) -> None:
        doc = tree.model_dump(mode="json")
        doc["_id"] = tree.doc_id
        try:
            await self.trees.insert_one(doc)
        except DuplicateKeyError:
            # A rebuild (rare): replace the earlier tree, still one per document.
            await self.trees.replace_one({"_id": tree.doc_id}, doc, upsert=True)

    async def get_tree(self, doc_id: str) -> DocumentTree | None:
        doc = await self.trees.find_one({"_id": doc_id})
        if not doc:
            return None
        doc.pop("_id", None)
        return DocumentTree.model_validate(doc)

    async def count_trees(self, doc_id: str) -> int:
        """Trees stored for a document (scans on FerretDB: for checks, not the hot path)."""
        return await self.trees.count_documents({"doc_id": doc_id})

    # ------------------------------------------------------------ PDF bytes

    async def put_pdf(self, doc_id: str, data: bytes) -> None:
        """In the blob store (GridFS unless another was given)."""
        await self.blobs.put(doc_id, data)

    async def get_pdf(self, doc_id: str) -> bytes | None:
        """From the blob store; a file stored before another blob store was configured is
        still read from GridFS."""
        data = await self.blobs.get(doc_id)
        if data is None and self.blobs is not self.gridfs:
            data = await self.gridfs.get(doc_id)
        return data

    # ------------------------------------------------------------ vectors

    async def put_embeddings(self, embeddings: DocumentEmbeddings) -> None:
        """Parts first, the head last; a rebuild drops parts past the new end (`_PartedBytes`)."""
        fields = embeddings.model_dump(mode="json", exclude={"page_vectors", "node_vectors"})
        fields["page_bytes"] = len(embeddings.page_vectors)
        await self._vectors.put(embeddings.doc_id, embeddings.page_vectors + embeddings.node_vectors, fields)

    async def get_embeddings(self, doc_id: str) -> DocumentEmbeddings | None:
        stored = await self._vectors.get(doc_id)
        if stored is None:
            return None
        fields, data = stored
        page_bytes = int(fields.pop("page_bytes"))
        return DocumentEmbeddings(**fields, page_vectors=data[:page_bytes], node_vectors=data[page_bytes:])

    async def delete_embeddings(self, doc_id: str) -> None:
        await self._vectors.delete(doc_id)

    # ------------------------------------------------------------ page analysis

    async def put_analysis(self, doc_id: str, data: bytes) -> None:
        """Parts first, the head last; a rebuild drops parts past the new end (`_PartedBytes`)."""
        await self._analysis.put(doc_id, data)

    async def get_analysis(self, doc_id: str) -> bytes | None:
        stored = await self._analysis.get(doc_id)
        return stored[1] if stored is not None else None

    async def delete_analysis(self, doc_id: str) -> None:
        await self._analysis.delete(doc_id)

    # ------------------------------------------------------------ recognised words

    async def put_text_layers(self, doc_id: str, layers: Sequence[TextLayer]) -> None:
        """The pages' rows first, the list of pages last; pages no longer recognised go after."""
        previous = await self.text_layers.find_one({"_id": doc_id}, {"pages": 1})
        rows = [{"_id": f"{doc_id}:{layer.page}", "doc_id": doc_id, "layer": layer.model_dump(mode="json")}
                for layer in layers]
        await _insert_or_replace(self.text_layer_pages, rows)
        pages = sorted(layer.page for layer in layers)
        if pages:
            await self.text_layers.replace_one({"_id": doc_id}, {"_id": doc_id, "pages": pages}, upsert=True)
        else:
            await self.text_layers.delete_one({"_id": doc_id})
        stale = sorted(set(previous.get("pages", [])) - set(pages)) if previous else []
        if stale:
            await self.text_layer_pages.delete_many({"_id": {"$in": [f"{doc_id}:{page}" for page in stale]}})

    async def get_text_layer(self, doc_id: str, page: int) -> TextLayer | None:
        row = await self.text_layer_pages.find_one({"_id": f"{doc_id}:{page}"})
        return TextLayer.model_validate(row["layer"]) if row is not None else None

    # ------------------------------------------------------------ indexing result

    async def put_indexed(self, indexed: IndexedDocument) -> None:
        await store_indexed(self, indexed)

    # ------------------------------------------------------------ cache

    @staticmethod
    def _cache_id(namespace: str, key: str) -> str:
        return f"{namespace}:{hashlib.sha256(key.encode()).hexdigest()}"

    def _cache_buckets(self) -> list[Any]:
        return [self.db[f"cache.{n:x}"] for n in range(CACHE_BUCKETS)]

    def _cache_bucket(self, cache_id: str) -> Any:
        digest = cache_id.rsplit(":", 1)[1]
        return self.db[f"cache.{int(digest[0], 16) % CACHE_BUCKETS:x}"]

    async def get_cached(self, namespace: str, key: str) -> dict[str, Any] | None:
        cid = self._cache_id(namespace, key)
        doc = await self._cache_bucket(cid).find_one({"_id": cid})
        return doc["value"] if doc else None

    async def put_cached(
        self, namespace: str, key: str, value: dict[str, Any], refs: Sequence[str] = ()
    ) -> None:
        cid = self._cache_id(namespace, key)
        bucket = self._cache_bucket(cid)
        row = {"_id": cid, "namespace": namespace, "value": value, "refs": list(refs), "at": utc_now()}
        await self.owned.note(Owned.CACHE, refs, cid)  # first: a stored row is always found
        try:
            await bucket.insert_one(row)
        except DuplicateKeyError:
            await bucket.replace_one({"_id": cid}, row, upsert=True)

    async def purge_cache(self, older_than: timedelta) -> int:
        """TTL indexes are not available on FerretDB: expired rows are deleted here."""
        cutoff = utc_now() - older_than
        removed = 0
        for bucket in self._cache_buckets():
            removed += (await bucket.delete_many({"at": {"$lt": cutoff}})).deleted_count
        return removed

    # ------------------------------------------------------------ deletion

    async def delete_document(self, doc_id: str) -> bool:
        """Everything derived first, by `_id`, the record last: a deletion that stops midway is
        finished by calling again (the record still names the document)."""
        stored = await self.documents.find_one({"_id": doc_id}, {"tenant": 1, POSITION_FIELD: 1})
        await _delete_numbered(self.page_chunks, doc_id)
        await self.trees.delete_one({"_id": doc_id})
        await self._vectors.remove(doc_id)
        await self._analysis.remove(doc_id)
        await self.put_text_layers(doc_id, [])
        await self.blobs.delete(doc_id)
        if self.blobs is not self.gridfs:
            await self.gridfs.delete(doc_id)
        await self.forget_cached(doc_id)
        async with self._changing_documents():
            await self.documents.delete_one({"_id": doc_id})
        if stored is not None:
            await self.order.forget(str(stored.get("tenant", DEFAULT_TENANT)), stored.get(POSITION_FIELD))
        return stored is not None

    async def forget_cached(self, doc_id: str) -> int:
        """Remove the cached values made from `doc_id` (noted in its ledger) by `_id`, then the
        ledger; how many."""
        cached = await self.owned.items(doc_id, Owned.CACHE)
        await remove_each(cached, lambda cid: self._cache_bucket(cid).delete_one({"_id": cid}))
        await self.owned.drop(doc_id, Owned.CACHE)
        return len(cached)

    async def close(self) -> None:
        if self._owns_client:
            await self.client.close()
