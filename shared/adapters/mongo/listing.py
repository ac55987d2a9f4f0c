"""The document listing, newest first, read by `_id` lookups only.

FerretDB 1.24 pushes nothing but `_id` equality down to its backend: a filter on `status`, a
range or a sort reads the whole collection, so a page of a 10,000-document listing would cost
as much as listing them all. Instead each document gets a position when it is first stored (a
counter row per tenant incremented by `_id`), and a row `document_order/<tenant>:<position>`
names it; a page reads
the positions below the cursor one `_id` lookup each, then their records, all in parallel.
The record's own `list_position` is the truth: an order row whose record is gone, or names
another position (two first writes raced), is passed over. On MongoDB the same lookups are
served by the `_id` index.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pymongo import ReturnDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.errors import DuplicateKeyError

from shared.model.documents import DocumentStatus
from shared.model.ids import DEFAULT_TENANT

POSITION_FIELD = "list_position"
COUNTER_ID = "order"
# A page reads at most this many positions per record asked for (positions of deleted documents
# are empty; a filter by a rare status skips most), so its cost stays bounded; the cursor
# continues where it stopped.
LOOKAHEAD = 4

ALLOCATE_ATTEMPTS = 50

Row = dict[str, Any]


def _order_id(tenant: str, position: int) -> str:
    return f"{tenant}:{position:012d}"


def _counter_id(tenant: str) -> str:
    return f"{COUNTER_ID}:{tenant}"


class DocumentOrder:
    def __init__(self, counters: AsyncCollection[Row], order: AsyncCollection[Row],
                 documents: AsyncCollection[Row]) -> None:
        self.counters = counters
        self.order = order
        self.documents = documents

    async def position_of(self, doc_id: str) -> int | None:
        row = await self.documents.find_one({"_id": doc_id}, {POSITION_FIELD: 1})
        value = row.get(POSITION_FIELD) if row else None
        return int(value) if value is not None else None

    async def allocate(self, tenant: str, doc_id: str) -> int:
        """The next position, with its order row written (before the record that names it).

        FerretDB does not apply concurrent `$inc`s atomically (two writers can read the same
        value): the order row's unique `_id` decides, and the loser takes the next number."""
        for _ in range(ALLOCATE_ATTEMPTS):
            try:
                # Two first writers may both try to create the counter: the loser tries again.
                counter = await self.counters.find_one_and_update(
                    {"_id": _counter_id(tenant)}, {"$inc": {"last": 1}}, upsert=True,
                    return_document=ReturnDocument.AFTER
                )
                assert counter is not None  # an upsert returning the document after it always has one
                position = int(counter["last"])
                await self.order.insert_one({"_id": _order_id(tenant, position), "doc_id": doc_id})
            except DuplicateKeyError:
                continue
            return position
        raise RuntimeError(f"no free listing position after {ALLOCATE_ATTEMPTS} attempts; retry the write")

    async def forget(self, tenant: str, position: int | None) -> None:
        if position is not None:
            await self.order.delete_one({"_id": _order_id(tenant, position)})

    async def last_position(self, tenant: str) -> int:
        counter = await self.counters.find_one({"_id": _counter_id(tenant)})
        return int(counter["last"]) if counter else 0

    async def page(self, tenant: str, limit: int, before: int | None, status: DocumentStatus | None,
                   readable: Callable[[Row], bool] = lambda row: True) -> tuple[list[Row], int | None]:
        """Up to `limit` of the tenant's `readable` record rows below position `before` (None:
        from the newest), newest first, and the position the next page starts below (None: no
        more)."""
        position = before if before is not None else await self.last_position(tenant) + 1
        budget = limit * LOOKAHEAD
        found: list[Row] = []
        while position > 1 and len(found) < limit and budget > 0:
            size = min(budget, limit - len(found) if status is None else limit)
            batch = list(range(position - 1, max(position - 1 - size, 0), -1))
            rows = await self._records_at(tenant, batch)
            budget -= len(batch)
            for at, row in zip(batch, rows, strict=True):
                position = at
                if row is not None and readable(row) and (status is None or row.get("status") == status.value):
                    found.append(row)
                    if len(found) == limit:
                        break
        return found, (position if position > 1 else None)

    async def _records_at(self, tenant: str, positions: list[int]) -> list[Row | None]:
        order_rows = await asyncio.gather(*(self.order.find_one({"_id": _order_id(tenant, p)}) for p in positions))
        doc_ids = [row["doc_id"] if row else None for row in order_rows]
        records = await asyncio.gather(*(self._record(d) for d in doc_ids))
        return [r if r is not None and r.get(POSITION_FIELD) == p and r.get("tenant") == tenant else None
                for p, r in zip(positions, records, strict=True)]

    async def _record(self, doc_id: str | None) -> Row | None:
        return await self.documents.find_one({"_id": doc_id}) if doc_id is not None else None

    async def backfill(self) -> int:
        """Positions for records stored before the listing had them (oldest first); a scan, run
        once at start. Returns how many were placed."""
        missing = await self.documents.find({POSITION_FIELD: {"$exists": False}},
                                            {"created_at": 1, "tenant": 1}).to_list(None)
        missing.sort(key=lambda row: str(row.get("created_at", "")))
        for row in missing:
            position = await self.allocate(str(row.get("tenant", DEFAULT_TENANT)), row["_id"])
            # By `_id` alone: the only filter FerretDB reads through the index.
            await self.documents.update_one({"_id": row["_id"]}, {"$set": {POSITION_FIELD: position}})
        return len(missing)
