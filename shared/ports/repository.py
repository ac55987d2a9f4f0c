"""The document store every stage stores through, as small protocols by what callers use:
records, page texts, trees, the navigator's page data, original files and the answer cache.
`Repository` is all of them, with the writes and the deletion that span them.

Two implementations: `EmbeddedRepository` (a folder, one process) and the MongoDB one
(services). Domain code never sees either; the composition roots pick one, and each caller
asks for the smallest protocol it uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from shared.model.documents import (
    DocumentEmbeddings,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.listing import DocumentPage
from shared.model.text_layer import TextLayer


class DocumentBeingDeleted(LookupError):
    """A write named a document whose deletion has started: it would bring the document back."""

    def __init__(self, doc_id: str) -> None:
        super().__init__(f"document {doc_id} is being deleted; upload it again in a few seconds, once its "
                         "deletion has finished")
        self.doc_id = doc_id


class DocumentRecords(Protocol):
    """Readers never see a record in `DocumentStatus.DELETING`: `get_document`, `list_documents`
    and `find_document` treat it as gone, so nothing is served of a document whose deletion
    has started while its pages, tree and cached answers are being removed."""

    async def put_document(self, record: DocumentRecord) -> None:
        """Raises `DocumentBeingDeleted` when the stored record is being deleted."""
        ...

    async def get_document(self, doc_id: str) -> DocumentRecord | None: ...

    async def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord | None]:
        """Each named record (None for one not stored or being deleted), in one request: a
        query asked of a whole store names every document of it."""
        ...

    async def list_documents(self) -> list[DocumentRecord]: ...

    async def ready_documents(self, tenant: str) -> list[DocumentRecord]:
        """The ready records of `tenant`, by doc id: the tenant and the status are the store's
        query, so what is read does not grow with other tenants' documents."""
        ...

    async def find_document(self, key: str) -> DocumentRecord | None:
        """By doc id, unique doc id prefix, or file name."""
        ...

    async def set_status(self, doc_id: str, status: DocumentStatus, reason: str | None = None) -> bool:
        """Set the status (and reason) without rewriting the record; False when it is missing or
        being deleted (`begin_deletion` is the only way into that state)."""
        ...

    async def begin_deletion(self, doc_id: str) -> DocumentRecord | None:
        """Mark the record `deleting` with one update of that record alone, after which no reader
        sees it; the record as it was, or None when none is stored or its deletion has started."""
        ...

    async def being_deleted(self, doc_id: str) -> bool:
        """Whether the document's deletion has started and not yet finished."""
        ...

    async def deleting_documents(self) -> list[DocumentRecord]:
        """The records whose deletion started and has not finished (a process stopped midway)."""
        ...


class DocumentListing(DocumentRecords, Protocol):
    """The records, and a tenant's listing read a page at a time (its cost bounded by the page,
    not by the store)."""

    async def list_page(self, tenant: str, limit: int, before: int | None = None,
                        status: DocumentStatus | None = None) -> DocumentPage:
        """The tenant's records, newest first, at most `limit` below position `before` (None:
        from the newest); with `status`, only those in it, so a page may hold fewer while more
        follow (`next_position`)."""
        ...


class PageTexts(Protocol):
    """Each document's page texts, and the words OCR recognised on its scanned pages."""

    async def put_pages(self, doc_id: str, pages: list[str]) -> None: ...

    async def get_pages(self, doc_id: str) -> list[str]: ...

    async def get_page(self, doc_id: str, number: int) -> str | None:
        """Text of 1-based physical page `number`, or None when out of range."""
        ...

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]:
        """The texts of the given 1-based pages that exist, by number."""
        ...

    async def put_text_layers(self, doc_id: str, layers: Sequence[TextLayer]) -> None:
        """The words and boxes of the pages OCR recognised (`TextLayer.page` names each);
        replaces the earlier ones, so [] leaves none."""
        ...

    async def get_text_layer(self, doc_id: str, page: int) -> TextLayer | None:
        """The stored words of 1-based page `page`, or None when the page was not recognised."""
        ...


class Trees(Protocol):
    async def put_tree(self, tree: DocumentTree) -> None: ...

    async def get_tree(self, doc_id: str) -> DocumentTree | None: ...


class PageData(Protocol):
    """What the navigator reads of each page beside its text: the vectors and the page analysis."""

    async def put_embeddings(self, embeddings: DocumentEmbeddings) -> None:
        """Replaces the document's earlier vectors."""
        ...

    async def get_embeddings(self, doc_id: str) -> DocumentEmbeddings | None: ...

    async def delete_embeddings(self, doc_id: str) -> None: ...

    async def put_analysis(self, doc_id: str, data: bytes) -> None:
        """The document's page analysis (opaque bytes, shared/text/page_analysis.py); replaces
        the earlier one."""
        ...

    async def get_analysis(self, doc_id: str) -> bytes | None:
        """The stored page analysis, or None when none is stored."""
        ...

    async def delete_analysis(self, doc_id: str) -> None: ...


class OriginalFiles(Protocol):
    """The uploaded file of each document, as it was uploaded."""

    async def put_pdf(self, doc_id: str, data: bytes) -> None: ...

    async def get_pdf(self, doc_id: str) -> bytes | None: ...


class CachedValues(Protocol):
    """Values computed from documents (answers, model replies), each dropped with a document it
    was made from."""

    async def get_cached(self, namespace: str, key: str) -> dict[str, Any] | None: ...

    async def put_cached(
        self, namespace: str, key: str, value: dict[str, Any], refs: Sequence[str] = ()
    ) -> None:
        """`refs`: the doc ids the value was made from, so deleting one of them drops it."""
        ...


class IndexedDocuments(DocumentRecords, PageTexts, Trees, PageData, Protocol):
    """The records of indexed documents with their pages, trees and page data."""


class Repository(IndexedDocuments, OriginalFiles, CachedValues, Protocol):
    """The whole store, with the writes and the deletion that span its parts."""

    async def put_indexed(self, indexed: IndexedDocument) -> None:
        """Pages, tree, vectors, page analysis and recognised words first, the record last: a
        record marked ready always has them. Without vectors or analysis, earlier ones are
        deleted (they belong to another tree)."""
        ...

    async def delete_document(self, doc_id: str) -> bool:
        """Remove the document's PDF, pages, tree, vectors, page analysis, recognised words and
        every cached value made from it (named in `refs`), then its record, last. Idempotent: after a stop midway,
        calling it again finishes. False when no record was stored."""
        ...

    async def close(self) -> None: ...
