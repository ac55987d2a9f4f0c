"""Accepting an uploaded file: stored once, its indexing request owed before its record says
"uploaded", so whatever fails next the indexer still hears of it.

The same bytes uploaded again by the same tenant are the same document (`document_id`): ready
and not asked to rebuild, nothing is done (`duplicate`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from shared.app.indexing import decide_indexing
from shared.app.outbox import OutboxPublisher
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import DocumentUploaded, IndexRequest
from shared.model.file_names import file_name_label
from shared.model.formats import FILE_EXTENSIONS, DocumentFormat
from shared.model.ids import BuilderChoice, document_id
from shared.ports.repository import DocumentBeingDeleted, DocumentRecords, OriginalFiles

logger = logging.getLogger(__name__)


class DocumentIdTaken(RuntimeError):
    def __init__(self) -> None:
        super().__init__("this id is taken by a document of another tenant; change the file and upload again")


class UploadStore(DocumentRecords, OriginalFiles, Protocol):
    """What accepting an upload writes: the file, then the record that owes its indexing."""


@dataclass(frozen=True)
class Upload:
    data: bytes
    format: DocumentFormat
    client_name: str | None  # as the client sent it; `FileNameError` when it cannot be a label
    tenant: str
    builder: BuilderChoice = "auto"
    rebuild: bool = False
    uploaded_by: str | None = None  # the caller, as `DocumentRecord.uploaded_by` names one


@dataclass(frozen=True)
class Accepted:
    doc_id: str
    status: DocumentStatus
    file_name: str
    duplicate: bool
    published: bool  # False: the broker did not take it in time; the outbox relay publishes it


async def accept_upload(upload: Upload, repository: UploadStore, outbox: OutboxPublisher, blob_scheme: str) -> Accepted:
    """Store the file and owe its indexing. Raises `DocumentBeingDeleted` (its deletion is under
    way), `DocumentIdTaken` and `FileNameError`."""
    doc_id = document_id(upload.data, upload.tenant)
    file_name = file_name_label(upload.client_name, fallback=f"{doc_id}{FILE_EXTENSIONS[upload.format]}")
    if await repository.being_deleted(doc_id):
        raise DocumentBeingDeleted(doc_id)
    existing = await repository.get_document(doc_id)
    if existing is not None and existing.tenant != upload.tenant:
        raise DocumentIdTaken()
    decision = decide_indexing(existing, upload.builder, force=upload.rebuild)
    if existing is not None and not decision.index:
        return Accepted(doc_id, existing.status, existing.file_name, duplicate=True, published=True)
    await repository.put_pdf(doc_id, upload.data)
    event = DocumentUploaded(
        doc_id=doc_id, tenant=upload.tenant, file_name=file_name, size_bytes=len(upload.data),
        pdf_ref=f"{blob_scheme}:{doc_id}", index_options=IndexRequest(builder=upload.builder), rebuild=decision.rebuild,
        format=upload.format,
    )
    await outbox.stage(event)
    # A rebuild keeps the first uploader: the document is theirs, whoever asked for the rebuild.
    record = existing or DocumentRecord(doc_id=doc_id, file_name=file_name, format=upload.format, tenant=upload.tenant,
                                        uploaded_by=upload.uploaded_by)
    # A deletion that started meanwhile raises `DocumentBeingDeleted` here; the indexer drops the
    # upload owed for it.
    await repository.put_document(record.model_copy(update={"status": DocumentStatus.UPLOADED, "reason": None}))
    published = await outbox.send(event)
    logger.info("document uploaded", extra={"fields": {"doc_id": doc_id, "file_name": file_name,
                                                       "bytes": len(upload.data), "published": published}})
    return Accepted(doc_id, DocumentStatus.UPLOADED, file_name, duplicate=existing is not None, published=published)
