"""Queries and their answers: what `GET /v1/queries/{id}` reads.

The gateway inserts the `queries` row (`pending`); the stage that finishes a query inserts its
result into `query_results` (same `_id`) before it publishes `answer.verified` or
`query.failed`, so a gateway that missed the event still finds the answer. A query is answered
once: the result row's `_id` is the query id, so a redelivered message cannot insert a second
answer. Results are inserted rather than updated in place because FerretDB 1.24 scans the whole
collection for every update, while an insert or an `_id` lookup stays cheap as it grows.

A failure row holds ids, the stage and the reason only (see `mark_failed`); `get` completes it
with the question and settings of the pending row.

Each query is also noted in the ledger of every document it is asked over or cites
(ownership.py), so deleting a document removes its queries by `_id`, however many are stored.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pymongo import ASCENDING, AsyncMongoClient
from pymongo.errors import DuplicateKeyError

from shared.adapters.mongo.ownership import Owned, OwnershipLedger, remove_each
from shared.model.clock import utc_now
from shared.model.events import QueryOutcome, StageTiming
from shared.model.query_records import REASON_MAX_CHARS, QueryRecord, QueryStatus


def _documents_of(record: QueryRecord) -> set[str]:
    """The documents a stored query is asked over or cites."""
    cited = {c.doc_id for c in record.outcome.answer.citations} if record.outcome is not None else set()
    return set(record.doc_ids) | cited


class MongoQueryRepository:
    def __init__(self, client: AsyncMongoClient[dict[str, Any]], db_name: str = "treerag") -> None:
        self.queries = client[db_name]["queries"]
        self.results = client[db_name]["query_results"]
        self.owned = OwnershipLedger(client[db_name])

    async def ensure_indexes(self) -> None:
        await self.queries.create_index([("status", ASCENDING), ("created_at", ASCENDING)])
        await self.results.create_index([("created_at", ASCENDING)])

    async def create(self, record: QueryRecord) -> bool:
        """False when a query with this id already exists (the client retried)."""
        doc = record.model_dump(mode="json")
        doc["_id"] = record.query_id
        doc["created_at"] = record.created_at
        # Noted first: a row stored is always one its documents' deletion finds.
        await self.owned.note(Owned.QUERIES, _documents_of(record), record.query_id)
        try:
            await self.queries.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    async def get(self, query_id: str) -> QueryRecord | None:
        """The finished record when there is one, else the pending one."""
        result = await self.results.find_one({"_id": query_id})
        if result is not None and "question" in result:
            return self._record(result)
        pending = await self.queries.find_one({"_id": query_id})
        if result is None:
            return self._record(pending) if pending else None
        failure = self._record(result)
        return failure.with_request(self._record(pending)) if pending else failure

    @staticmethod
    def _record(doc: dict[str, Any]) -> QueryRecord:
        doc.pop("_id", None)
        return QueryRecord.model_validate(doc)

    async def _insert_result(self, record: QueryRecord) -> bool:
        await self.owned.note(Owned.QUERIES, _documents_of(record), record.query_id)
        doc = record.model_dump(mode="json")
        doc["_id"] = record.query_id
        doc["created_at"] = record.created_at
        try:
            await self.results.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    async def mark_answered(
        self, query_id: str, outcome: QueryOutcome, timings: list[StageTiming], seed: QueryRecord
    ) -> bool:
        """Store the answer unless one is stored already. True when this call stored it.

        `seed` (question, documents, settings) makes the result row complete on its own, also
        for a query published without going through the gateway. An answer replaces an earlier
        failure (a redelivery that succeeded after a stage gave up).
        """
        answered = seed.model_copy(
            update={"query_id": query_id, "status": QueryStatus.ANSWERED, "outcome": outcome, "timings": timings,
                    "reason": None, "failed_stage": None, "finished_at": utc_now()}
        )
        if await self._insert_result(answered):
            return True
        stored = await self.results.find_one({"_id": query_id}, {"status": 1})
        if stored is None or stored.get("status") != QueryStatus.FAILED.value:
            return False
        doc = answered.model_dump(mode="json")
        doc["created_at"] = answered.created_at
        result = await self.results.update_one({"_id": query_id, "status": QueryStatus.FAILED.value}, {"$set": doc})
        return result.modified_count == 1

    async def mark_failed(self, query_id: str, stage: str, reason: str, *, tenant: str = "default") -> bool:
        """Record a failure unless the query already has a result; True when this call stored it.

        Only ids, the stage and the (shortened) reason are stored, never the question, settings
        or timings of the failed message: they may be what failed the stage, and recording the
        failure must not fail the same way.
        """
        now = utc_now()
        doc = {"_id": query_id, "query_id": query_id, "tenant": tenant, "status": QueryStatus.FAILED.value,
               "reason": reason[:REASON_MAX_CHARS], "failed_stage": stage, "created_at": now, "finished_at": now}
        try:
            await self.results.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    async def count_owned(self, doc_id: str) -> int:
        return await self.owned.count(doc_id, Owned.QUERIES)

    async def forget_document(self, doc_id: str) -> int:
        """Remove the queries noted in the document's ledger, each with its result (a failure
        names only its query), by `_id`; the ledger goes last, so a stop midway is finished by
        calling again. An answer over all documents is noted under the ones it cites."""
        owned = await self.owned.items(doc_id, Owned.QUERIES)

        async def remove(query_id: str) -> None:
            await self.results.delete_one({"_id": query_id})
            await self.queries.delete_one({"_id": query_id})

        await remove_each(owned, remove)
        await self.owned.drop(doc_id, Owned.QUERIES)
        return len(owned)

    async def purge(self, older_than: timedelta) -> int:
        cutoff = utc_now() - older_than
        removed = await self.queries.delete_many({"created_at": {"$lt": cutoff}})
        finished = await self.results.delete_many({"created_at": {"$lt": cutoff}})
        return removed.deleted_count + finished.deleted_count
