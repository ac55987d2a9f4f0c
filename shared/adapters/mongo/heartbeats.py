"""Stage heartbeats on MongoDB (or FerretDB): collection `heartbeats`, one row per process.

Every stage process upserts its row every few seconds (`seen_at`, and how many partitions its
consumers own); a graceful stop removes it. The gateway's /readyz reads the rows seen recently:
a stage with none is dead (killed, hung, or cut off from the store). One small write per process
and interval, one read per probe.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from shared.model.clock import utc_now
from shared.model.heartbeats import Heartbeat

__all__ = ["Heartbeat", "MongoHeartbeats", "this_instance"]

STALE_ROWS_KEPT = timedelta(days=1)


def this_instance() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class MongoHeartbeats:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.rows = db["heartbeats"]

    async def beat(self, stage: str, instance: str, partitions: int) -> None:
        await self.rows.update_one(
            {"_id": instance},
            {"$set": {"stage": stage, "instance": instance, "seen_at": utc_now(), "partitions": partitions}},
            upsert=True,
        )

    async def remove(self, instance: str) -> None:
        await self.rows.delete_one({"_id": instance})

    async def purge_stale(self) -> None:
        """Rows of processes killed long ago (a killed process cannot remove its own)."""
        await self.rows.delete_many({"seen_at": {"$lt": utc_now() - STALE_ROWS_KEPT}})

    async def seen_since(self, since: datetime) -> list[Heartbeat]:
        rows = await self.rows.find({"seen_at": {"$gte": since}}).to_list(None)
        return [Heartbeat.model_validate(row) for row in rows]
