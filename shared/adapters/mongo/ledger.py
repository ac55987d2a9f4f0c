"""Delivery bookkeeping: attempts per message and work already done per stage.

`DeliveryLedger` keeps them in MongoDB. The indexer counts every attempt there, so a message
that kills its process (a crash, an out-of-memory kill) is also counted and ends in the
dead-letter topic instead of crash-looping the stage; the query stages write there only when a
handler fails (see `shared/adapters/kafka/delivery.py`). "Done" markers make the indexer idempotent: a
redelivered upload whose tree was already stored and published is acknowledged without work.
`RecentKeys` is the in-process version for the query stages, whose work is deterministic: a
redelivery they miss (after a restart) only recomputes and republishes the same result, and the
verifier's insert-once answer keeps one answer per query.
No TTL indexes (FerretDB lacks them): `purge` deletes old rows.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pymongo import ASCENDING, ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from shared.model.clock import utc_now


class DeliveryLedger:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.attempts = db["delivery_attempts"]
        self.done = db["delivery_done"]

    async def ensure_indexes(self) -> None:
        await self.attempts.create_index([("at", ASCENDING)])
        await self.done.create_index([("at", ASCENDING)])

    @staticmethod
    def _message_id(group: str, topic: str, partition: int, offset: int) -> str:
        return f"{group}|{topic}|{partition}|{offset}"

    async def begin_attempt(self, group: str, topic: str, partition: int, offset: int) -> int:
        """Count one more attempt at this message (by this consumer group); returns the count."""
        doc = await self.attempts.find_one_and_update(
            {"_id": self._message_id(group, topic, partition, offset)},
            {"$inc": {"count": 1}, "$set": {"at": utc_now()}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        assert doc is not None  # an upsert returning the document after it always has one
        return int(doc["count"])

    async def end_attempts(self, group: str, topic: str, partition: int, offset: int) -> None:
        await self.attempts.delete_one({"_id": self._message_id(group, topic, partition, offset)})

    async def is_done(self, stage: str, key: str) -> bool:
        return await self.done.find_one({"_id": f"{stage}|{key}"}, {"_id": 1}) is not None

    async def mark_done(self, stage: str, key: str, **info: Any) -> None:
        try:
            await self.done.insert_one({"_id": f"{stage}|{key}", "at": utc_now(), **info})
        except DuplicateKeyError:
            pass

    async def purge(self, older_than: timedelta) -> int:
        cutoff = utc_now() - older_than
        removed = await self.done.delete_many({"at": {"$lt": cutoff}})
        stale = await self.attempts.delete_many({"at": {"$lt": cutoff}})
        return removed.deleted_count + stale.deleted_count
