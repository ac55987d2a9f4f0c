"""In-memory implementations of our own ports, for testing handlers and delivery decisions
without Kafka or MongoDB.

Each fake keeps the contract its port documents (and the Mongo adapter implements): the query
store (the one-process engine's) answers a query once, an answer replaces a failure and a
failure never replaces an answer; the ledger counts attempts per consumer group and message. They also record what a
test asks about: reads of the repository, events published, dead letters written.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from shared.adapters.memory.queries import InMemoryQueryStore
from shared.app.indexing import store_indexed
from shared.model.api_keys import ApiKeyRecord
from shared.model.documents import (
    DocumentEmbeddings,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.events import DeadLetter, Event
from shared.model.outbox import OutboxEntry
from shared.model.text_layer import TextLayer
from shared.ports.repository import DocumentBeingDeleted

E = TypeVar("E", bound=Event)

# The one-process engine's query store keeps the Mongo store's rules already: tests use it as is.
FakeQueryStore = InMemoryQueryStore


def _now() -> datetime:
    return datetime.now(UTC)


class FakeRepository:
    """Documents, pages, trees, vectors, page analyses, PDFs and cache entries in dicts. `reads`
    counts each read method's calls, so a test can tell whether a handler went to the store."""

    def __init__(self) -> None:
        self.documents: dict[str, DocumentRecord] = {}
        self.pages: dict[str, list[str]] = {}
        self.trees: dict[str, DocumentTree] = {}
        self.embeddings: dict[str, DocumentEmbeddings] = {}
        self.analysis: dict[str, bytes] = {}
        self.pdfs: dict[str, bytes] = {}
        self.text_layers: dict[str, dict[int, TextLayer]] = {}
        self.cached: dict[tuple[str, str], dict[str, Any]] = {}
        self.cache_refs: dict[tuple[str, str], tuple[str, ...]] = {}
        self.reads: Counter[str] = Counter()

    def _readable(self) -> dict[str, DocumentRecord]:
        return {d: r for d, r in self.documents.items() if r.status != DocumentStatus.DELETING}

    async def put_document(self, record: DocumentRecord) -> None:
        if await self.being_deleted(record.doc_id):
            raise DocumentBeingDeleted(record.doc_id)
        self.documents[record.doc_id] = record.model_copy(update={"updated_at": _now()})

    async def get_document(self, doc_id: str) -> DocumentRecord | None:
        self.reads["get_document"] += 1
        return self._readable().get(doc_id)

    async def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord | None]:
        self.reads["get_documents"] += 1
        readable = self._readable()
        return {doc_id: readable.get(doc_id) for doc_id in doc_ids}

    async def list_documents(self) -> list[DocumentRecord]:
        self.reads["list_documents"] += 1
        return sorted(self._readable().values(), key=lambda r: (r.file_name, r.doc_id))

    async def ready_documents(self, tenant: str) -> list[DocumentRecord]:
        self.reads["ready_documents"] += 1
        return sorted((r for r in self._readable().values() if r.tenant == tenant and r.status == DocumentStatus.READY),
                      key=lambda r: r.doc_id)

    async def find_document(self, key: str) -> DocumentRecord | None:
        self.reads["find_document"] += 1
        readable = self._readable()
        if key in readable:
            return readable[key]
        records = list(readable.values())
        matches = [r for r in records if r.doc_id.startswith(key)] or [
            r for r in records if r.file_name == key or Path(r.file_name).stem == key
        ]
        return matches[0] if len(matches) == 1 else None

    async def set_status(self, doc_id: str, status: DocumentStatus, reason: str | None = None) -> bool:
        record = self._readable().get(doc_id)
        if record is None:
            return False
        self.documents[doc_id] = record.model_copy(update={"status": status, "reason": reason})
        return True

    async def begin_deletion(self, doc_id: str) -> DocumentRecord | None:
        record = self._readable().get(doc_id)
        if record is not None:
            self.documents[doc_id] = record.model_copy(update={"status": DocumentStatus.DELETING})
        return record

    async def being_deleted(self, doc_id: str) -> bool:
        record = self.documents.get(doc_id)
        return record is not None and record.status == DocumentStatus.DELETING

    async def deleting_documents(self) -> list[DocumentRecord]:
        return [r for r in self.documents.values() if r.status == DocumentStatus.DELETING]

    async def put_pages(self, doc_id: str, pages: list[str]) -> None:
        self.pages[doc_id] = list(pages)

    async def get_pages(self, doc_id: str) -> list[str]:
        self.reads["get_pages"] += 1
        return list(self.pages.get(doc_id, []))

    async def get_page(self, doc_id: str, number: int) -> str | None:
        self.reads["get_page"] += 1
        pages = self.pages.get(doc_id, [])
        return pages[number - 1] if 1 <= number <= len(pages) else None

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]:
        self.reads["get_page_texts"] += 1
        pages = self.pages.get(doc_id, [])
        return {n: pages[n - 1] for n in numbers if 1 <= n <= len(pages)}

    async def put_tree(self, tree: DocumentTree) -> None:
        self.trees[tree.doc_id] = tree

    async def get_tree(self, doc_id: str) -> DocumentTree | None:
        self.reads["get_tree"] += 1
        return self.trees.get(doc_id)

    async def put_pdf(self, doc_id: str, data: bytes) -> None:
        self.pdfs[doc_id] = data

    async def get_pdf(self, doc_id: str) -> bytes | None:
        self.reads["get_pdf"] += 1
        return self.pdfs.get(doc_id)

    async def put_embeddings(self, embeddings: DocumentEmbeddings) -> None:
        self.embeddings[embeddings.doc_id] = embeddings

    async def get_embeddings(self, doc_id: str) -> DocumentEmbeddings | None:
        self.reads["get_embeddings"] += 1
        return self.embeddings.get(doc_id)

    async def delete_embeddings(self, doc_id: str) -> None:
        self.embeddings.pop(doc_id, None)

    async def put_analysis(self, doc_id: str, data: bytes) -> None:
        self.analysis[doc_id] = data

    async def get_analysis(self, doc_id: str) -> bytes | None:
        self.reads["get_analysis"] += 1
        return self.analysis.get(doc_id)

    async def delete_analysis(self, doc_id: str) -> None:
        self.analysis.pop(doc_id, None)

    async def put_text_layers(self, doc_id: str, layers: Sequence[TextLayer]) -> None:
        self.text_layers[doc_id] = {layer.page: layer for layer in layers}
        if not layers:
            self.text_layers.pop(doc_id, None)

    async def get_text_layer(self, doc_id: str, page: int) -> TextLayer | None:
        self.reads["get_text_layer"] += 1
        return self.text_layers.get(doc_id, {}).get(page)

    async def put_indexed(self, indexed: IndexedDocument) -> None:
        await store_indexed(self, indexed)

    async def get_cached(self, namespace: str, key: str) -> dict[str, Any] | None:
        self.reads["get_cached"] += 1
        return self.cached.get((namespace, key))

    async def put_cached(
        self, namespace: str, key: str, value: dict[str, Any], refs: Sequence[str] = ()
    ) -> None:
        self.cached[(namespace, key)] = value
        self.cache_refs[(namespace, key)] = tuple(refs)

    async def delete_document(self, doc_id: str) -> bool:
        await self.delete_embeddings(doc_id)
        await self.delete_analysis(doc_id)
        for store in (self.pages, self.trees, self.pdfs, self.text_layers):
            store.pop(doc_id, None)  # type: ignore[attr-defined]
        quoted = json.dumps(doc_id)
        for entry in [k for k, v in self.cached.items()
                      if doc_id in self.cache_refs.get(k, ()) or quoted in json.dumps(v)]:
            self.cached.pop(entry)
            self.cache_refs.pop(entry, None)
        return self.documents.pop(doc_id, None) is not None

    async def close(self) -> None:
        return None


class FakeOutbox:
    """Owed events in a dict, with the Mongo outbox's claim rule (a claim pushes `due_at`)."""

    def __init__(self) -> None:
        self.entries: dict[str, OutboxEntry] = {}

    async def add(self, entry: OutboxEntry) -> None:
        self.entries.setdefault(entry.entry_id, entry)

    async def claim_due(self, now: datetime, until: datetime, limit: int) -> list[OutboxEntry]:
        due = sorted((e for e in self.entries.values() if e.due_at <= now), key=lambda e: e.due_at)[:limit]
        for entry in due:
            self.entries[entry.entry_id] = entry.model_copy(update={"due_at": until, "attempts": entry.attempts + 1})
        return [self.entries[e.entry_id] for e in due]

    async def reschedule(self, entry_id: str, due_at: datetime) -> None:
        if entry_id in self.entries:
            self.entries[entry_id] = self.entries[entry_id].model_copy(update={"due_at": due_at})

    async def remove(self, entry_id: str) -> None:
        self.entries.pop(entry_id, None)

    async def discard(self, key: str) -> int:
        owed = [k for k, e in self.entries.items() if e.key == key]
        for k in owed:
            del self.entries[k]
        return len(owed)

    async def pending(self) -> int:
        return len(self.entries)


class PublishFailed(ConnectionError):
    """What `RecordingPublisher` raises while told to fail: the broker did not take the event."""


class RecordingPublisher:
    """Records published events (and raw dead letters) in order. `fail_next(n)` makes the next
    `n` publishes raise, as a broker that is down would."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.raw: list[tuple[str, bytes, str | None]] = []
        self._failures_left = 0

    def fail_next(self, count: int = 1) -> None:
        self._failures_left = count

    async def publish(self, event: Event) -> None:
        if self._failures_left > 0:
            self._failures_left -= 1
            raise PublishFailed(f"broker unavailable; {event.TOPIC} not published")
        self.events.append(event)

    async def publish_raw(self, topic: str, payload: bytes, key: str | None) -> None:
        self.raw.append((topic, payload, key))

    def letters(self) -> list[DeadLetter]:
        """The dead letters written, in order."""
        return [DeadLetter.model_validate_json(payload) for _, payload, _ in self.raw]

    def of_type(self, event_type: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, event_type)]

    @property
    def topics(self) -> list[str]:
        return [e.TOPIC for e in self.events]


class FakeLedger:
    """Both delivery ledgers in dicts: attempts per (group, topic, partition, offset) and the
    messages each stage finished."""

    def __init__(self) -> None:
        self.attempts: dict[tuple[str, str, int, int], int] = {}
        self.done: dict[tuple[str, str], dict[str, Any]] = {}

    async def begin_attempt(self, group: str, topic: str, partition: int, offset: int) -> int:
        message = (group, topic, partition, offset)
        self.attempts[message] = self.attempts.get(message, 0) + 1
        return self.attempts[message]

    async def end_attempts(self, group: str, topic: str, partition: int, offset: int) -> None:
        self.attempts.pop((group, topic, partition, offset), None)

    async def is_done(self, stage: str, key: str) -> bool:
        return (stage, key) in self.done

    async def mark_done(self, stage: str, key: str, **info: Any) -> None:
        self.done.setdefault((stage, key), info)


class FakeKeyStore:
    """API key records in a dict; `reads` counts lookups (the gateway caches them)."""

    def __init__(self) -> None:
        self.records: dict[str, ApiKeyRecord] = {}
        self.reads = 0

    async def add(self, record: ApiKeyRecord) -> None:
        if record.key_id in self.records:
            raise ValueError(f"key id {record.key_id} is taken")
        self.records[record.key_id] = record

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        self.reads += 1
        return self.records.get(key_id)

    async def list(self) -> list[ApiKeyRecord]:
        return sorted(self.records.values(), key=lambda r: (r.created_at, r.key_id))

    async def revoke(self, key_id: str) -> bool:
        record = self.records.get(key_id)
        if record is None:
            return False
        if not record.revoked:
            self.records[key_id] = record.model_copy(update={"revoked_at": _now()})
        return True
