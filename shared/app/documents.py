"""Which documents a caller may read, and which a query of theirs is asked over: one rule for
the HTTP API, the conversations and the tool server.

Documents are addressed by id only (a file name is a label several documents may share), and
another tenant's document is not found: never "forbidden", since that would say the id exists.
"""

from __future__ import annotations

from shared.model.documents import DocumentRecord, DocumentStatus
from shared.ports.repository import DocumentListing, DocumentRecords


class DocumentNotFound(LookupError):
    def __init__(self, doc_id: str) -> None:
        super().__init__(f"no document with id {_shortened(doc_id)!r}")
        self.doc_id = doc_id


class DocumentNotReady(RuntimeError):
    """A query named a document that cannot be asked over yet (or failed to index)."""

    def __init__(self, record: DocumentRecord) -> None:
        detail = f"document {record.doc_id} is {record.status.value}"
        super().__init__(detail + (f": {record.reason}" if record.reason else "; retry when it is ready"))
        self.record = record


class NothingToAsk(RuntimeError):
    def __init__(self) -> None:
        super().__init__("no document is ready to ask over; upload a document first")


def _shortened(text: str, limit: int = 64) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


async def tenant_document(repository: DocumentRecords, doc_id: str, tenant: str) -> DocumentRecord:
    """The record of `doc_id` when it belongs to `tenant`; `DocumentNotFound` otherwise."""
    record = await repository.get_document(doc_id)
    if record is None or record.tenant != tenant:
        raise DocumentNotFound(doc_id)
    return record


async def any_ready(listing: DocumentListing, tenant: str) -> bool:
    """Whether `tenant` has a ready document: read from the tenant's own listing, newest first,
    so the answer costs a page, not a read of every tenant's records."""
    before: int | None = None
    while True:
        page = await listing.list_page(tenant, 1, before, DocumentStatus.READY)
        if page.records:
            return True
        if page.next_position is None:
            return False
        before = page.next_position


async def query_documents(repository: DocumentListing, doc_ids: list[str], tenant: str) -> list[str]:
    """The canonical ids of the documents a query names, each ready to ask over; [] when it names
    none, meaning every document of the tenant (`NothingToAsk` when none of them is ready)."""
    if not doc_ids:
        if not await any_ready(repository, tenant):
            raise NothingToAsk()
        return []
    resolved: list[str] = []
    for doc_id in doc_ids:
        record = await tenant_document(repository, doc_id, tenant)
        if record.status != DocumentStatus.READY:
            raise DocumentNotReady(record)
        resolved.append(record.doc_id)
    return resolved
