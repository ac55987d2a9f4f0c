"""A repository in a plain folder: JSON files, written atomically. For one process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from stat import S_ISREG
from typing import Any

from shared.app.indexing import store_indexed
from shared.model.documents import (
    DocumentEmbeddings,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.text_layer import TextLayer
from shared.ports.repository import DocumentBeingDeleted


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Named by process and thread: the model clients' worker threads write cached replies at once.
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class EmbeddedRepository:
    """A record whose deletion has started (status `deleting`) is hidden from every reader.

    Layout: documents/<id>.json, pages/<id>.json, trees/<id>.json, pdfs/<id>.pdf,
    embeddings/<id>.vec (a JSON header line, then the packed float16 page and node vectors),
    analysis/<id>.bin (the page analysis, opaque bytes: shared/text/page_analysis.py),
    cache/<namespace>/<sha256(key)>.json, and cache-refs/<doc id>/<namespace>/<sha256(key)>: an
    empty file per cached value made from that document, so deleting it finds them."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._pages: dict[str, list[str]] = {}
        # record file name -> (its identity, the record read from it), for `list_documents` and
        # `get_document`: a query reads every record it asks over, and a stat costs a small
        # share of reading and validating the file.
        self._listed: dict[str, tuple[tuple[int, int, int], DocumentRecord]] = {}

    def _file(self, kind: str, name: str, suffix: str = ".json") -> str:
        # A string: a query stats every record it asks over, and making a Path costs more.
        return os.path.join(self.root, kind, f"{name}{suffix}")

    def _path(self, kind: str, name: str, suffix: str = ".json") -> Path:
        return Path(self._file(kind, name, suffix))

    async def put_document(self, record: DocumentRecord) -> None:
        """Raises `DocumentBeingDeleted` over a record whose deletion has started."""
        stored = await self._stored(record.doc_id)
        if stored is not None and stored.status == DocumentStatus.DELETING:
            raise DocumentBeingDeleted(record.doc_id)
        _write_atomic(self._path("documents", record.doc_id), record.model_dump_json().encode())

    async def get_document(self, doc_id: str) -> DocumentRecord | None:
        """None for a record being deleted, as for one not stored."""
        record = await self._stored(doc_id)
        return record if record is not None and record.status != DocumentStatus.DELETING else None

    async def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord | None]:
        return {doc_id: await self.get_document(doc_id) for doc_id in dict.fromkeys(doc_ids)}

    async def _stored(self, doc_id: str) -> DocumentRecord | None:
        """The stored record in any state."""
        path = self._file("documents", doc_id)
        try:
            stat = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not S_ISREG(stat.st_mode):
            return None
        return self._record_at(f"{doc_id}.json", path, stat)

    def _record_at(self, name: str, path: str, stat: os.stat_result) -> DocumentRecord:
        """The record in file `name`, validated once per version of the file (a query asked of
        a whole store reads every record of it); a copy, so no caller changes the kept one.
        Every write replaces the file (`_write_atomic`): a new inode and modification time."""
        identity = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        cached = self._listed.get(name)
        if cached is None or cached[0] != identity:
            with open(path, "rb") as file:
                cached = self._listed[name] = (identity, DocumentRecord.model_validate_json(file.read()))
        return cached[1].model_copy()

    async def list_documents(self) -> list[DocumentRecord]:
        """Every record not being deleted, by file name. Read once per version of its file: an
        unnamed query lists the whole store, and a stat costs a small share of reading and
        validating a record."""
        folder = os.path.join(self.root, "documents")
        try:
            entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        records = []
        for entry in entries:
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue  # deleted since the folder was read
            try:
                records.append(self._record_at(entry.name, entry.path, stat))
            except FileNotFoundError:
                continue
        if len(self._listed) > len(entries):  # forget the records of files gone since
            present = {entry.name for entry in entries}
            self._listed = {name: item for name, item in self._listed.items() if name in present}
        return sorted((r for r in records if r.status != DocumentStatus.DELETING), key=lambda r: (r.file_name, r.doc_id))

    async def ready_documents(self, tenant: str) -> list[DocumentRecord]:
        """A folder has no query to filter in: the tenant's ready records of the listing."""
        return sorted((r for r in await self.list_documents() if r.tenant == tenant and r.status == DocumentStatus.READY),
                      key=lambda r: r.doc_id)

    async def find_document(self, key: str) -> DocumentRecord | None:
        exact = await self.get_document(key) if "/" not in key else None
        if exact:
            return exact
        records = await self.list_documents()
        matches = [r for r in records if r.doc_id.startswith(key)] or [
            r for r in records if r.file_name == key or Path(r.file_name).stem == key
        ]
        return matches[0] if len(matches) == 1 else None

    async def set_status(self, doc_id: str, status: DocumentStatus, reason: str | None = None) -> bool:
        record = await self.get_document(doc_id)
        if record is None:
            return False
        await self.put_document(record.model_copy(update={"status": status, "reason": reason}))
        return True

    async def begin_deletion(self, doc_id: str) -> DocumentRecord | None:
        """One atomic replace of the record file."""
        record = await self.get_document(doc_id)
        if record is None:
            return None
        deleting = record.model_copy(update={"status": DocumentStatus.DELETING})
        _write_atomic(self._path("documents", doc_id), deleting.model_dump_json().encode())
        return record

    async def being_deleted(self, doc_id: str) -> bool:
        record = await self._stored(doc_id)
        return record is not None and record.status == DocumentStatus.DELETING

    async def deleting_documents(self) -> list[DocumentRecord]:
        folder = self.root / "documents"
        records = [DocumentRecord.model_validate_json(p.read_bytes()) for p in folder.glob("*.json")] \
            if folder.is_dir() else []
        return [r for r in records if r.status == DocumentStatus.DELETING]

    async def put_pages(self, doc_id: str, pages: list[str]) -> None:
        _write_atomic(self._path("pages", doc_id), json.dumps(pages, ensure_ascii=False).encode())
        self._pages[doc_id] = pages

    async def get_pages(self, doc_id: str) -> list[str]:
        if doc_id not in self._pages:
            path = self._path("pages", doc_id)
            self._pages[doc_id] = json.loads(path.read_bytes()) if path.is_file() else []
        return self._pages[doc_id]

    async def get_page(self, doc_id: str, number: int) -> str | None:
        pages = await self.get_pages(doc_id)
        return pages[number - 1] if 1 <= number <= len(pages) else None

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]:
        pages = await self.get_pages(doc_id)
        return {n: pages[n - 1] for n in numbers if 1 <= n <= len(pages)}

    async def put_tree(self, tree: DocumentTree) -> None:
        _write_atomic(self._path("trees", tree.doc_id), tree.model_dump_json().encode())

    async def get_tree(self, doc_id: str) -> DocumentTree | None:
        path = self._path("trees", doc_id)
        if not path.is_file():
            return None
        return DocumentTree.model_validate_json(path.read_bytes())

    async def put_pdf(self, doc_id: str, data: bytes) -> None:
        _write_atomic(self._path("pdfs", doc_id, ".pdf"), data)

    async def get_pdf(self, doc_id: str) -> bytes | None:
        path = self._path("pdfs", doc_id, ".pdf")
        return path.read_bytes() if path.is_file() else None

    async def put_embeddings(self, embeddings: DocumentEmbeddings) -> None:
        header = embeddings.model_dump(mode="json", exclude={"page_vectors", "node_vectors"})
        header["page_bytes"] = len(embeddings.page_vectors)
        data = json.dumps(header).encode() + b"\n" + embeddings.page_vectors + embeddings.node_vectors
        _write_atomic(self._path("embeddings", embeddings.doc_id, ".vec"), data)

    async def get_embeddings(self, doc_id: str) -> DocumentEmbeddings | None:
        path = self._path("embeddings", doc_id, ".vec")
        if not path.is_file():
            return None
        data = path.read_bytes()
        split = data.index(b"\n")
        header = json.loads(data[:split])
        vectors = data[split + 1 :]
        page_bytes = int(header.pop("page_bytes"))
        return DocumentEmbeddings(**header, page_vectors=vectors[:page_bytes], node_vectors=vectors[page_bytes:])

    async def delete_embeddings(self, doc_id: str) -> None:
        self._path("embeddings", doc_id, ".vec").unlink(missing_ok=True)

    async def put_analysis(self, doc_id: str, data: bytes) -> None:
        _write_atomic(self._path("analysis", doc_id, ".bin"), data)

    async def get_analysis(self, doc_id: str) -> bytes | None:
        path = self._path("analysis", doc_id, ".bin")
        return path.read_bytes() if path.is_file() else None

    async def delete_analysis(self, doc_id: str) -> None:
        self._path("analysis", doc_id, ".bin").unlink(missing_ok=True)

    async def put_text_layers(self, doc_id: str, layers: Sequence[TextLayer]) -> None:
        path = self._path("text-layers", doc_id)
        if not layers:
            path.unlink(missing_ok=True)
            return
        data = json.dumps({str(layer.page): layer.model_dump(mode="json") for layer in layers}, ensure_ascii=False)
        _write_atomic(path, data.encode())

    async def get_text_layer(self, doc_id: str, page: int) -> TextLayer | None:
        path = self._path("text-layers", doc_id)
        if not path.is_file():
            return None
        stored = json.loads(path.read_bytes()).get(str(page))
        return TextLayer.model_validate(stored) if stored is not None else None

    async def put_indexed(self, indexed: IndexedDocument) -> None:
        await store_indexed(self, indexed)

    def _cache_path(self, namespace: str, key: str) -> Path:
        digest = hashlib.sha256(key.encode()).hexdigest()
        return self._path(f"cache/{namespace}", digest)

    async def get_cached(self, namespace: str, key: str) -> dict[str, Any] | None:
        return self.read_cached(namespace, key)

    async def put_cached(
        self, namespace: str, key: str, value: dict[str, Any], refs: Sequence[str] = ()
    ) -> None:
        self.write_cached(namespace, key, value, refs)

    def read_cached(self, namespace: str, key: str) -> dict[str, Any] | None:
        """`get_cached` without an event loop (the model clients' worker threads call it)."""
        path = self._cache_path(namespace, key)
        return json.loads(path.read_bytes()) if path.is_file() else None

    def write_cached(self, namespace: str, key: str, value: dict[str, Any], refs: Sequence[str] = ()) -> None:
        """`put_cached` without an event loop."""
        path = self._cache_path(namespace, key)
        for doc_id in refs:
            marker = self.root / "cache-refs" / doc_id / namespace / path.stem
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        _write_atomic(path, json.dumps(value, ensure_ascii=False).encode())

    async def delete_document(self, doc_id: str) -> bool:
        """Everything derived first, the record last (asking again finishes a deletion that
        stopped midway)."""
        record_path = self._path("documents", doc_id)
        existed = record_path.is_file()
        self._pages.pop(doc_id, None)
        for path in (self._path("pages", doc_id), self._path("trees", doc_id), self._path("pdfs", doc_id, ".pdf")):
            path.unlink(missing_ok=True)
        await self.delete_embeddings(doc_id)
        await self.delete_analysis(doc_id)
        await self.put_text_layers(doc_id, [])
        refs = self.root / "cache-refs" / doc_id
        if refs.is_dir():
            for marker in refs.glob("*/*"):
                self._path(f"cache/{marker.parent.name}", marker.name).unlink(missing_ok=True)
            shutil.rmtree(refs, ignore_errors=True)
        # Values cached before they named their documents: found by the id they cite.
        quoted = json.dumps(doc_id).encode()
        cache = self.root / "cache"
        if cache.is_dir():
            for path in cache.glob("*/*.json"):
                if quoted in path.read_bytes():
                    path.unlink(missing_ok=True)
        record_path.unlink(missing_ok=True)
        self._listed.pop(f"{doc_id}.json", None)
        return existed

    async def close(self) -> None:
        self._pages.clear()
        self._listed.clear()
