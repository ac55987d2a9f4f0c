"""Deleting a document: one rule for the gateway (`DELETE /v1/documents/{id}`) and
`treerag delete`.

`delete_document` makes the document unreadable with one change of its record (status
`deleting`, which every read path treats as gone: the record, pages, tree, PDF, the listing, the
stages' document resolution and so the cached answers keyed by it), drops its owed upload, and
publishes `document.deleted`, which tells the stages to drop what they keep in memory. That
takes the same few lookups however much is stored. `finish_deletion` then removes what was made
from it (conversations over it or citing it, stored queries and results asked over or citing
it, cached answers, vectors, page analysis, tree, pages, the file) and the record last, so a
deletion stopped midway is found again by its record (`deleting_documents`) and finished by
calling it again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from shared.model.documents import DocumentRecord
from shared.model.events import DocumentDeleted
from shared.ports.bus import Publisher
from shared.ports.chats import ChatStore
from shared.ports.document_keys import DocumentKeys
from shared.ports.outbox import Outbox
from shared.ports.queries import QueryStore
from shared.ports.repository import Repository

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deletion:
    record: DocumentRecord
    # Stored queries asked over the document or citing it, each with its result: removed by
    # `finish_deletion` (counted when the deletion started).
    queries_removed: int


async def delete_document(
    doc_id: str, repository: Repository, queries: QueryStore, publisher: Publisher, pending: Outbox | None = None,
    keys: DocumentKeys | None = None,
) -> Deletion | None:
    """Start deleting `doc_id`: from the return on nothing serves it; None when it is not stored
    (or its deletion has already started). `finish_deletion` removes the rest.
    `pending`: where owed events wait; the document's (an upload not yet published) are dropped.
    `keys`: the document's key is destroyed first, so the text retained messages hold of it
    can no longer be read (shared/adapters/sealing.py)."""
    record = await repository.begin_deletion(doc_id)
    if record is None:
        return None
    if keys is not None:
        await keys.destroy(doc_id)
    if pending is not None:
        await pending.discard(doc_id)
    owned = await queries.count_owned(doc_id)
    await publisher.publish(DocumentDeleted(doc_id=doc_id, tenant=record.tenant, file_name=record.file_name))
    logger.info("document deletion started", extra={"fields": {"doc_id": doc_id, "queries": owned}})
    return Deletion(record=record, queries_removed=owned)


async def finish_deletion(doc_id: str, repository: Repository, queries: QueryStore,
                          chats: ChatStore | None = None, keys: DocumentKeys | None = None) -> int:
    """Remove everything made from `doc_id`, then its record; how many stored queries went.
    `chats`: the conversations over it or citing it go too; `keys`: its key, when a stop right
    after the deletion started left it. Idempotent: calling it again after a stop midway (or
    for a document already gone) finishes."""
    if keys is not None:
        await keys.destroy(doc_id)
    if chats is not None:
        await chats.forget_document(doc_id)
    removed = await queries.forget_document(doc_id)
    await repository.delete_document(doc_id)
    logger.info("document deleted", extra={"fields": {"doc_id": doc_id, "queries_removed": removed}})
    return removed


async def finish_interrupted(repository: Repository, queries: QueryStore) -> list[str]:
    """Finish every deletion that started and did not end (its process stopped); their doc ids."""
    doc_ids = [record.doc_id for record in await repository.deleting_documents()]
    for doc_id in doc_ids:
        await finish_deletion(doc_id, repository, queries)
    if doc_ids:
        logger.info("interrupted deletions finished", extra={"fields": {"documents": len(doc_ids)}})
    return doc_ids
