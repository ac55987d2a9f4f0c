"""The outbox on MongoDB (or FerretDB): collection `outbox`, `_id` = event id.

Rows live seconds (removed once published), so the collection stays small and FerretDB's scans
of it stay cheap. Claims are a conditional update on the row's `due_at`, so two gateway replicas
never publish the same row at once (a duplicate after a crash is skipped by the consumers).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from shared.model.outbox import OutboxEntry


def _row(entry: OutboxEntry) -> dict[str, Any]:
    row = entry.model_dump()
    row["_id"] = row.pop("entry_id")
    return row


def _entry(row: dict[str, Any]) -> OutboxEntry:
    return OutboxEntry.model_validate({**{k: v for k, v in row.items() if k != "_id"}, "entry_id": row["_id"]})


class MongoOutbox:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.rows = db["outbox"]

    async def ensure_indexes(self) -> None:
        await self.rows.create_index([("due_at", ASCENDING)])
        await self.rows.create_index([("key", ASCENDING)])

    async def add(self, entry: OutboxEntry) -> None:
        try:
            await self.rows.insert_one(_row(entry))
        except DuplicateKeyError:
            pass  # the same event recorded twice: one publication owed

    async def claim_due(self, now: datetime, until: datetime, limit: int) -> list[OutboxEntry]:
        due = await self.rows.find({"due_at": {"$lte": now}}).sort("due_at", ASCENDING).to_list(limit)
        claimed = []
        for row in due:
            result = await self.rows.update_one(
                {"_id": row["_id"], "due_at": row["due_at"]}, {"$set": {"due_at": until}, "$inc": {"attempts": 1}}
            )
            if result.modified_count == 1:
                claimed.append(_entry({**row, "due_at": until, "attempts": int(row.get("attempts", 0)) + 1}))
        return claimed

    async def reschedule(self, entry_id: str, due_at: datetime) -> None:
        await self.rows.update_one({"_id": entry_id}, {"$set": {"due_at": due_at}})

    async def remove(self, entry_id: str) -> None:
        await self.rows.delete_one({"_id": entry_id})

    async def discard(self, key: str) -> int:
        return (await self.rows.delete_many({"key": key})).deleted_count

    async def pending(self) -> int:
        return await self.rows.count_documents({})
