"""Indexer stage: `document.uploaded` -> pages, tree and record stored -> `tree.built`.

A document that cannot be indexed is an answer, not an error: the record gets status `failed` with
the one-line reason and `document.failed` is published; the stage goes on with the next one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from services.indexer.errors import DocumentError
from services.indexer.pipeline import IndexOptions, OcrMode, index_document
from shared.adapters.llm.client import LLMClient
from shared.adapters.logs import log_fields
from shared.adapters.metrics import DOCUMENTS, PAGES_INDEXED, TREE_BUILD_SECONDS
from shared.app.indexing import next_version
from shared.model.delivery import Delivery, Failure, PermanentError
from shared.model.documents import DocumentRecord, DocumentStatus, IndexedDocument
from shared.model.events import DocumentFailed, DocumentUploaded, TreeBuilt
from shared.model.tree import count_nodes
from shared.ports.bus import Publisher
from shared.ports.ledger import DoneLedger
from shared.ports.model_roles import Embedder
from shared.ports.repository import DocumentBeingDeleted, Repository

logger = logging.getLogger(__name__)

STAGE = "indexer"


def tree_built(record: DocumentRecord, node_count: int, tenant: str) -> TreeBuilt:
    return TreeBuilt(
        doc_id=record.doc_id,
        tenant=tenant,
        file_name=record.file_name,
        version=record.version,
        page_count=record.page_count,
        node_count=node_count,
        builder=record.builder,
        build_seconds=record.build_seconds,
        warnings=record.warnings,
    )


class IndexerHandlers:
    def __init__(
        self,
        repo: Repository,
        bus: Publisher,
        ledger: DoneLedger,
        *,
        max_pages: int,
        llm: LLMClient | None = None,
        page_delay_s: float = 0.0,
        embedder: Embedder | None = None,
        max_poll_interval_s: float = 1800.0,
        ocr: OcrMode = "auto",
        ocr_languages: str = "eng",
        ocr_workers: int = 0,
    ) -> None:
        self.repo = repo
        self.bus = bus
        self.ledger = ledger
        self.max_pages = max_pages
        self.llm = llm
        self.page_delay_s = page_delay_s
        self.embedder = embedder
        self.max_poll_interval_s = max_poll_interval_s
        self.ocr_options = {"ocr": ocr, "ocr_languages": ocr_languages, "ocr_workers": ocr_workers}

    def _progress(self) -> Callable[[int], None] | None:
        if self.page_delay_s <= 0:
            return None
        delay = self.page_delay_s

        def slow_down(pages: int) -> None:  # runs in the worker thread
            time.sleep(delay * pages)

        return slow_down

    async def on_uploaded(self, event: DocumentUploaded, delivery: Delivery) -> None:
        if await self.ledger.is_done(STAGE, event.event_id):
            logger.info("upload already handled; redelivery skipped")
            return
        if await self.repo.being_deleted(event.doc_id):
            await self._drop_deleted(event)
            return
        previous = await self.repo.get_document(event.doc_id)
        if previous is not None and previous.tenant != event.tenant:
            # Ids are per tenant (`document_id`): an event naming another tenant's document is not
            # the gateway's; indexing it would give that tenant's id the sender's PDF.
            logger.warning("upload names a document of another tenant; ignored",
                           extra=log_fields(tenant=event.tenant, owner=previous.tenant))
            await self.ledger.mark_done(STAGE, event.event_id)
            return
        # A record without a builder was never indexed, so it has no tree to find: skipping the
        # read matters on FerretDB, where it scans every stored tree.
        tree = await self.repo.get_tree(event.doc_id) if previous and previous.builder is not None else None
        if previous and previous.status == DocumentStatus.READY and tree and not event.rebuild:
            # Stored by an earlier delivery that stopped before publishing: publish only.
            await self.bus.publish(tree_built(previous, count_nodes(tree.nodes), event.tenant))
            await self.ledger.mark_done(STAGE, event.event_id)
            return
        data = await self.repo.get_pdf(event.doc_id)
        if data is None:
            raise PermanentError(
                f"the file of {event.doc_id} ({event.pdf_ref}) is not where this indexer reads files: give the gateway "
                "and every indexer the same TREERAG_BLOB_DIR (or none), or upload it again"
            )
        try:
            await self._mark_indexing(event, previous)
        except DocumentBeingDeleted:
            await self._drop_deleted(event)
            return
        options = IndexOptions(**{"max_pages": self.max_pages, **self.ocr_options, **event.index_options.model_dump()})
        try:
            # Extraction and tree building are CPU work: a worker thread keeps heartbeats going.
            indexed = await asyncio.to_thread(
                index_document, data, event.file_name, options, self.llm, self._progress(), self.embedder,
                event.format, event.doc_id,
            )
        except DocumentError as exc:
            await self._fail(event, str(exc), type(exc).__name__)
            await self.ledger.mark_done(STAGE, event.event_id)
            return
        if await self.repo.get_document(event.doc_id) is None:
            # Deleted while it was being indexed: storing the result would bring it back.
            await self.ledger.mark_done(STAGE, event.event_id)
            logger.info("document deleted while indexing; result dropped")
            return
        record = self._finish_record(indexed, event, previous)
        try:
            await self.repo.put_indexed(indexed.model_copy(update={"record": record}))
        except DocumentBeingDeleted:
            # Its deletion started while the pages were being stored: they go with it.
            await self.repo.delete_document(event.doc_id)
            await self._drop_deleted(event)
            return
        builder = record.builder.value if record.builder else "unknown"
        PAGES_INDEXED.labels(builder=builder).inc(record.page_count)
        TREE_BUILD_SECONDS.labels(builder=builder).observe(record.build_seconds)
        DOCUMENTS.labels(status=DocumentStatus.READY.value).inc()
        await self.bus.publish(tree_built(record, count_nodes(indexed.tree.nodes), event.tenant))
        await self.ledger.mark_done(STAGE, event.event_id)
        logger.info(
            "tree built",
            extra=log_fields(pages=record.page_count, builder=builder, version=record.version,
                             seconds=record.build_seconds),
        )

    async def _drop_deleted(self, event: DocumentUploaded) -> None:
        """An upload of a document whose deletion has started: indexing it would bring it back."""
        await self.ledger.mark_done(STAGE, event.event_id)
        logger.info("upload of a document being deleted; dropped")

    async def _mark_indexing(self, event: DocumentUploaded, previous: DocumentRecord | None) -> None:
        if previous is None:
            # Published by something other than the gateway: create the record it would have.
            previous = DocumentRecord(doc_id=event.doc_id, file_name=event.file_name, tenant=event.tenant)
        await self.repo.put_document(previous.model_copy(update={"status": DocumentStatus.INDEXING, "reason": None}))

    @staticmethod
    def _finish_record(
        indexed: IndexedDocument, event: DocumentUploaded, previous: DocumentRecord | None
    ) -> DocumentRecord:
        update: dict[str, object] = {"tenant": event.tenant, "status": DocumentStatus.READY, "reason": None}
        if previous is not None:
            update["created_at"] = previous.created_at
            update["uploaded_by"] = previous.uploaded_by
            update["file_name"] = previous.file_name or indexed.record.file_name
        update["version"] = next_version(previous, indexed.record)
        return indexed.record.model_copy(update=update)

    async def _fail(self, event: DocumentUploaded, reason: str, error_type: str) -> None:
        await self._fail_document(event.doc_id, event.tenant, event.file_name, reason, error_type)

    async def _fail_document(self, doc_id: str, tenant: str, file_name: str, reason: str, error_type: str) -> None:
        found = await self.repo.set_status(doc_id, DocumentStatus.FAILED, reason)
        if not found:
            try:
                await self.repo.put_document(
                    DocumentRecord(doc_id=doc_id, file_name=file_name, tenant=tenant,
                                   status=DocumentStatus.FAILED, reason=reason)
                )
            except DocumentBeingDeleted:
                logger.info("failure of a document being deleted not recorded", extra=log_fields(reason=reason))
                return
        DOCUMENTS.labels(status=DocumentStatus.FAILED.value).inc()
        await self.bus.publish(
            DocumentFailed(doc_id=doc_id, tenant=tenant, file_name=file_name,
                           stage=STAGE, reason=reason, error_type=error_type)
        )
        logger.warning("document failed", extra=log_fields(reason=reason, error_type=error_type))

    async def give_up(self, failure: Failure) -> None:
        """From ids only: the upload message itself may be what failed."""
        if failure.key is None or not failure.decoded:
            # An unreadable message names its document by its Kafka key alone: not enough to
            # mark a document (maybe ready) failed. It stays in the dead-letter topic.
            logger.warning("an unreadable upload message was dead-lettered; no document marked",
                           extra=log_fields(key=failure.key))
            return
        await self._fail_document(failure.key, failure.tenant, "", f"indexing failed: {failure.reason}",
                                  failure.error_type)
