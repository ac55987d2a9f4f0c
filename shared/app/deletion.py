"""Deleting a document: one rule for the gateway (`DELETE /v1/documents/{id}`) and
`treerag delete`.

The store forgets the document first (record, PDF, pages, tree, cached answers made from it,
stored queries asked over it or citing it), then `document.deleted` tells the stages to drop
what they keep in memory. In that order a stage that reloads after the event finds nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from shared.model.documents import DocumentRecord
from shared.model.events import DocumentDeleted
from shared.ports.bus import Publisher
from shared.ports.outbox import Outbox
from shared.ports.queries import QueryStore
from shared.ports.repository import Repository

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deletion:
    record: DocumentRecord
    queries_removed: int


async def delete_document(
    doc_id: str, repository: Repository, queries: QueryStore, publisher: Publisher, pending: Outbox | None = None
) -> Deletion | None:
    """Delete the document `doc_id` and everything made from it; None when it is not stored.
    `pending`: where owed events wait; the document's (an upload not yet published) are dropped."""
    record = await repository.get_document(doc_id)
    if record is None:
        return None
    if pending is not None:
        await pending.discard(doc_id)
    removed = await queries.forget_document(doc_id)
    await repository.delete_document(doc_id)
    await publisher.publish(DocumentDeleted(doc_id=doc_id, tenant=record.tenant, file_name=record.file_name))
    logger.info("document deleted", extra={"fields": {"doc_id": doc_id, "queries_removed": removed}})
    return Deletion(record=record, queries_removed=removed)
