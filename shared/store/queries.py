"""Queries and their answers, in the `queries` collection: what `GET /v1/queries/{id}` reads.

The gateway creates the row (`pending`); the verifier stores the answer before it publishes
`answer.verified`, so a gateway that missed the event still finds the answer here. A query is
answered once: a redelivered message cannot overwrite the first answer.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field
from pymongo import ASCENDING, AsyncMongoClient
from pymongo.errors import DuplicateKeyError

from shared.events import QueryOutcome, StageTiming
from shared.query import QuerySettings


class QueryStatus(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    FAILED = "failed"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class QueryRecord(BaseModel):
    query_id: str
    question: str
    doc_ids: list[str] = Field(default_factory=list)
    settings: QuerySettings = Field(default_factory=QuerySettings)
    tenant: str = "default"
    status: QueryStatus = QueryStatus.PENDING
    outcome: QueryOutcome | None = None
    reason: str | None = None
    failed_stage: str | None = None
    timings: list[StageTiming] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=_utc_now)
    finished_at: datetime | None = None


class MongoQueryRepository:
    def __init__(self, client: AsyncMongoClient[dict[str, Any]], db_name: str = "treerag") -> None:
        self.queries = client[db_name]["queries"]

    async def ensure_indexes(self) -> None:
        await self.queries.create_index([("status", ASCENDING), ("created_at", ASCENDING)])

    async def create(self, record: QueryRecord) -> bool:
        """False when a query with this id already exists (the client retried)."""
        doc = record.model_dump(mode="json")
        doc["_id"] = record.query_id
        doc["created_at"] = record.created_at
        try:
            await self.queries.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    async def get(self, query_id: str) -> QueryRecord | None:
        doc = await self.queries.find_one({"_id": query_id})
        if not doc:
            return None
        doc.pop("_id", None)
        return QueryRecord.model_validate(doc)

    async def mark_answered(
        self, query_id: str, outcome: QueryOutcome, timings: list[StageTiming], seed: QueryRecord
    ) -> bool:
        """Store the answer unless one is stored already. True when this call stored it.

        `seed` fills in the row when the query was published without going through the
        gateway (another producer, or a replayed topic).
        """
        now = _utc_now()
        result = await self.queries.update_one(
            {"_id": query_id, "status": {"$ne": QueryStatus.ANSWERED.value}},
            {
                "$set": {
                    "status": QueryStatus.ANSWERED.value,
                    "outcome": outcome.model_dump(mode="json"),
                    "timings": [t.model_dump(mode="json") for t in timings],
                    "reason": None,
                    "failed_stage": None,
                    "finished_at": now,
                }
            },
        )
        if result.matched_count:
            return True
        if await self.queries.find_one({"_id": query_id}, {"_id": 1}):
            return False
        seeded = seed.model_copy(
            update={"status": QueryStatus.ANSWERED, "outcome": outcome, "timings": timings, "finished_at": now}
        )
        return await self.create(seeded)

    async def mark_failed(
        self, query_id: str, stage: str, reason: str, timings: list[StageTiming], seed: QueryRecord
    ) -> bool:
        """Record a failure unless the query already has an answer."""
        now = _utc_now()
        result = await self.queries.update_one(
            {"_id": query_id, "status": QueryStatus.PENDING.value},
            {
                "$set": {
                    "status": QueryStatus.FAILED.value,
                    "reason": reason,
                    "failed_stage": stage,
                    "timings": [t.model_dump(mode="json") for t in timings],
                    "finished_at": now,
                }
            },
        )
        if result.matched_count:
            return True
        if await self.queries.find_one({"_id": query_id}, {"_id": 1}):
            return False
        seeded = seed.model_copy(
            update={
                "status": QueryStatus.FAILED,
                "reason": reason,
                "failed_stage": stage,
                "timings": timings,
                "finished_at": now,
            }
        )
        return await self.create(seeded)

    async def purge(self, older_than: timedelta) -> int:
        result = await self.queries.delete_many({"created_at": {"$lt": _utc_now() - older_than}})
        return result.deleted_count
