"""The indexer's give-up: a document is marked failed from ids only, and only for a message that
was read (an unreadable one names its document by the Kafka key alone)."""

from __future__ import annotations

from services.indexer.handlers import IndexerHandlers
from shared.model.delivery import Failure
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import DocumentFailed
from tests.support.fakes import FakeLedger, FakeRepository, RecordingPublisher


def store(*records: DocumentRecord) -> FakeRepository:
    repo = FakeRepository()
    repo.documents.update({r.doc_id: r for r in records})
    return repo


def handlers(repo: FakeRepository, bus: RecordingPublisher) -> IndexerHandlers:
    return IndexerHandlers(repo, bus, FakeLedger(), max_pages=10)


def failure(decoded: bool) -> Failure:
    return Failure("indexer", "document.uploaded", "d1", "PermanentError", "the PDF bytes are gone", 1,
                   tenant="acme", decoded=decoded)


async def test_a_read_message_that_failed_marks_its_document_failed() -> None:
    repo, bus = store(DocumentRecord(doc_id="d1", file_name="a.pdf")), RecordingPublisher()
    await handlers(repo, bus).give_up(failure(decoded=True))
    assert repo.documents["d1"].status == DocumentStatus.FAILED
    assert "the PDF bytes are gone" in (repo.documents["d1"].reason or "")
    [event] = bus.events
    assert isinstance(event, DocumentFailed) and event.doc_id == "d1" and event.tenant == "acme"


async def test_an_unreadable_message_leaves_a_ready_document_alone() -> None:
    ready = DocumentRecord(doc_id="d1", file_name="a.pdf", status=DocumentStatus.READY)
    repo, bus = store(ready), RecordingPublisher()
    await handlers(repo, bus).give_up(failure(decoded=False))
    assert repo.documents["d1"].status == DocumentStatus.READY and bus.events == []
