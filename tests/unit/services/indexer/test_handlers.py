"""The indexer's handler over in-memory ports: what it stores and publishes for each upload."""

from __future__ import annotations

import hashlib

import pytest

from services.indexer.handlers import IndexerHandlers
from shared.model.delivery import Delivery, Failure, PermanentError
from shared.model.documents import BuilderName, DocumentRecord, DocumentStatus
from shared.model.events import DocumentFailed, DocumentUploaded, TreeBuilt
from shared.model.formats import DocumentFormat
from shared.model.tree import walk_tree
from tests.support.fakes import FakeLedger, FakeRepository, PublishFailed, RecordingPublisher
from tests.support.formats import guide_docx, ole_file
from tests.support.pdfs import ExpectedHeading, corrupt_pdf, manual_pdf


class Indexer:
    def __init__(self) -> None:
        self.repository = FakeRepository()
        self.bus = RecordingPublisher()
        self.ledger = FakeLedger()
        self.handlers = IndexerHandlers(self.repository, self.bus, self.ledger, max_pages=200)

    async def upload(self, data: bytes, file_name: str = "manual.pdf", rebuild: bool = False) -> DocumentUploaded:
        """What the gateway does: the bytes and an `uploaded` record stored, then the event."""
        doc_id = hashlib.sha256(data).hexdigest()[:16]
        await self.repository.put_pdf(doc_id, data)
        if doc_id not in self.repository.documents:
            await self.repository.put_document(DocumentRecord(doc_id=doc_id, file_name=file_name, tenant="acme",
                                                              uploaded_by="key:k-ann"))
        return DocumentUploaded(doc_id=doc_id, file_name=file_name, size_bytes=len(data), pdf_ref=f"gridfs:{doc_id}",
                                tenant="acme", rebuild=rebuild)

    @staticmethod
    def failure(event: DocumentUploaded, error_type: str, reason: str) -> Failure:
        """What the delivery layer tells the give-up hook about an upload message it ended."""
        return Failure("indexer", event.TOPIC, event.doc_id, error_type, reason, 3, tenant=event.tenant)

    async def handle(self, event: DocumentUploaded, offset: int = 0) -> None:
        await self.handlers.on_uploaded(event, Delivery("indexer", "document.uploaded", 0, offset, 1, 0.0))


@pytest.fixture(scope="module")
def manual() -> tuple[bytes, list[ExpectedHeading]]:
    return manual_pdf(chapters=2, sections=2, pages_per_section=1)


async def test_an_uploaded_pdf_is_stored_ready_and_announced(manual: tuple[bytes, list[ExpectedHeading]]) -> None:
    data, headings = manual
    indexer = Indexer()
    event = await indexer.upload(data)

    await indexer.handle(event)

    record = indexer.repository.documents[event.doc_id]
    assert record.status == DocumentStatus.READY and record.reason is None
    assert record.tenant == "acme" and record.version == 1
    assert record.uploaded_by == "key:k-ann"  # who may delete it as its editor
    tree = indexer.repository.trees[event.doc_id]
    titles = " ".join(n.title for n in tree.nodes)
    assert headings[0].title in titles
    assert len(indexer.repository.pages[event.doc_id]) == record.page_count > 0
    [built] = indexer.bus.events
    assert isinstance(built, TreeBuilt)
    assert (built.doc_id, built.file_name, built.tenant) == (event.doc_id, "manual.pdf", "acme")
    assert (built.version, built.page_count) == (1, record.page_count)
    assert built.node_count >= len(tree.nodes) and built.builder == record.builder


async def test_an_uploaded_docx_is_indexed_from_its_headings() -> None:
    indexer = Indexer()
    event = await indexer.upload(guide_docx(), file_name="guide.docx")

    await indexer.handle(event)

    record = indexer.repository.documents[event.doc_id]
    assert record.status == DocumentStatus.READY and record.format == DocumentFormat.DOCX
    assert record.builder == BuilderName.OUTLINE
    assert "3.2 Error codes" in [n.title for n in walk_tree(indexer.repository.trees[event.doc_id].nodes)]
    assert indexer.bus.topics == ["tree.built"]


async def test_a_bad_docx_fails_with_its_one_line_reason() -> None:
    indexer = Indexer()
    event = await indexer.upload(ole_file(encrypted=True), file_name="locked.docx")

    await indexer.handle(event)

    record = indexer.repository.documents[event.doc_id]
    assert record.status == DocumentStatus.FAILED
    assert record.reason is not None and "encrypted with a password" in record.reason and "\n" not in record.reason
    [failed] = indexer.bus.events
    assert isinstance(failed, DocumentFailed) and failed.error_type == "EncryptedDocumentError"


async def test_a_redelivered_upload_is_not_indexed_again(manual: tuple[bytes, list[ExpectedHeading]]) -> None:
    indexer = Indexer()
    event = await indexer.upload(manual[0])

    await indexer.handle(event)
    await indexer.handle(event)

    assert indexer.bus.topics == ["tree.built"]
    assert indexer.repository.reads["get_pdf"] == 1


async def test_a_redelivery_after_the_tree_was_stored_but_not_announced_only_publishes(
    manual: tuple[bytes, list[ExpectedHeading]],
) -> None:
    indexer = Indexer()
    event = await indexer.upload(manual[0])
    indexer.bus.fail_next()
    with pytest.raises(PublishFailed):
        await indexer.handle(event)
    assert indexer.repository.documents[event.doc_id].status == DocumentStatus.READY
    assert not indexer.bus.events

    await indexer.handle(event)

    [built] = indexer.bus.events
    assert isinstance(built, TreeBuilt) and built.version == 1
    assert indexer.repository.reads["get_pdf"] == 1  # the PDF was not extracted twice
    assert await indexer.ledger.is_done("indexer", event.event_id)


async def test_a_rebuild_gets_the_next_version(manual: tuple[bytes, list[ExpectedHeading]]) -> None:
    indexer = Indexer()
    await indexer.handle(await indexer.upload(manual[0]))

    await indexer.handle(await indexer.upload(manual[0], rebuild=True))

    assert [e.version for e in indexer.bus.of_type(TreeBuilt)] == [1, 2]
    assert next(iter(indexer.repository.documents.values())).version == 2


async def test_a_corrupt_pdf_ends_failed_with_a_reason() -> None:
    indexer = Indexer()
    event = await indexer.upload(corrupt_pdf(), file_name="broken.pdf")

    await indexer.handle(event)

    record = indexer.repository.documents[event.doc_id]
    assert record.status == DocumentStatus.FAILED and record.reason
    [failed] = indexer.bus.events
    assert isinstance(failed, DocumentFailed)
    assert (failed.doc_id, failed.file_name, failed.stage, failed.tenant) == (event.doc_id, "broken.pdf", "indexer", "acme")
    assert failed.reason == record.reason and failed.error_type
    # A failed document is a final answer: its redelivery is not indexed again.
    await indexer.handle(event)
    assert indexer.bus.topics == ["document.failed"]


async def test_missing_pdf_bytes_are_a_permanent_error_that_says_what_to_do() -> None:
    indexer = Indexer()
    event = DocumentUploaded(doc_id="f" * 16, file_name="gone.pdf", size_bytes=10, pdf_ref="gridfs:" + "f" * 16)

    with pytest.raises(PermanentError, match="upload it again"):
        await indexer.handle(event)
    assert not indexer.bus.events


async def test_give_up_marks_the_document_failed_and_publishes_document_failed(
    manual: tuple[bytes, list[ExpectedHeading]],
) -> None:
    indexer = Indexer()
    event = await indexer.upload(manual[0])

    await indexer.handlers.give_up(indexer.failure(event, "ProcessDied", "the indexer process stopped 3 times"))

    record = indexer.repository.documents[event.doc_id]
    assert record.status == DocumentStatus.FAILED
    assert record.reason is not None and "stopped 3 times" in record.reason
    [failed] = indexer.bus.events
    assert isinstance(failed, DocumentFailed)
    assert failed.error_type == "ProcessDied" and failed.reason == record.reason


async def test_give_up_without_a_record_creates_a_failed_one() -> None:
    indexer = Indexer()
    event = DocumentUploaded(doc_id="e" * 16, file_name="lost.pdf", size_bytes=10, pdf_ref="gridfs:x", tenant="acme")

    await indexer.handlers.give_up(indexer.failure(event, "PermanentError", "the PDF bytes are not stored"))

    record = indexer.repository.documents[event.doc_id]
    assert (record.status, record.tenant) == (DocumentStatus.FAILED, "acme")
    assert record.reason is not None and "not stored" in record.reason
    assert indexer.bus.topics == ["document.failed"]


async def test_a_document_deleted_while_it_is_indexed_is_not_brought_back(
    manual: tuple[bytes, list[ExpectedHeading]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import services.indexer.handlers as handlers_module

    indexer = Indexer()
    event = await indexer.upload(manual[0])
    real_index_document = handlers_module.index_document

    def index_then_delete(*args, **kwargs):  # type: ignore[no-untyped-def]
        indexed = real_index_document(*args, **kwargs)
        # `DELETE /v1/documents/{id}` lands while the tree is being built.
        indexer.repository.documents.pop(event.doc_id)
        indexer.repository.pdfs.pop(event.doc_id)
        return indexed

    monkeypatch.setattr(handlers_module, "index_document", index_then_delete)
    await indexer.handle(event)

    assert event.doc_id not in indexer.repository.documents
    assert event.doc_id not in indexer.repository.pages and event.doc_id not in indexer.repository.trees
    assert indexer.bus.of_type(TreeBuilt) == []
    assert await indexer.ledger.is_done("indexer", event.event_id)  # a redelivery does not redo it
