"""The indexer's give-up: a document is marked failed from ids only, and only for a message that
was read (an unreadable one names its document by the Kafka key alone)."""

from __future__ import annotations

from services.indexer.handlers import IndexerHandlers
from shared.model.delivery import Failure
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import DocumentFailed, Event


class InMemoryDocuments:
    def __init__(self, *records: DocumentRecord) -> None:
        self.records = {r.doc_id: r for r in records}

    async def set_status(self, doc_id: str, status: DocumentStatus, reason: str | None = None) -> bool:
        if doc_id not in self.records:
            return False
        self.records[doc_id] = self.records[doc_id].model_copy(update={"status": status, "reason": reason})
        return True

    async def put_document(self, record: DocumentRecord) -> None:
        self.records[record.doc_id] = record


class RecordingBus:
    def __init__(self) -> None:
        self.events: list[Event] = []

    async def publish(self, event: Event) -> None:
        self.events.append(event)


def handlers(repo: InMemoryDocuments, bus: RecordingBus) -> IndexerHandlers:
    return IndexerHandlers(repo, bus, ledger=None, max_pages=10)  # type: ignore[arg-type]


def failure(decoded: bool) -> Failure:
    return Failure("indexer", "document.uploaded", "d1", "PermanentError", "the PDF bytes are gone", 1,
                   tenant="acme", decoded=decoded)


async def test_a_read_message_that_failed_marks_its_document_failed() -> None:
    repo, bus = InMemoryDocuments(DocumentRecord(doc_id="d1", file_name="a.pdf")), RecordingBus()
    await handlers(repo, bus).give_up(failure(decoded=True))
    assert repo.records["d1"].status == DocumentStatus.FAILED
    assert "the PDF bytes are gone" in (repo.records["d1"].reason or "")
    [event] = bus.events
    assert isinstance(event, DocumentFailed) and event.doc_id == "d1" and event.tenant == "acme"


async def test_an_unreadable_message_leaves_a_ready_document_alone() -> None:
    ready = DocumentRecord(doc_id="d1", file_name="a.pdf", status=DocumentStatus.READY)
    repo, bus = InMemoryDocuments(ready), RecordingBus()
    await handlers(repo, bus).give_up(failure(decoded=False))
    assert repo.records["d1"].status == DocumentStatus.READY and bus.events == []
