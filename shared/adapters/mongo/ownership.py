"""What was stored from each document, so that deleting it finds every row by `_id`.

Stored queries, their results and cached answers grow with traffic, and on FerretDB 1.24 any
filter but `_id` equality reads the whole collection: finding "the queries citing document X"
by a filter would cost more with every query ever asked. Instead, whenever such a row is stored,
its id is inserted into a ledger of each document it names: the collection
`owned.<doc_id>.<kind>` (`_id` = the row's id, nothing else). Deleting the document then reads
its own ledgers (a scan of that document's rows only), deletes each row by `_id`, and drops the
ledgers. A ledger insert costs about one `_id` insert per document named (0.8 ms on FerretDB,
2.8 ms for a document's first); counting a ledger (`collStats`) costs about 40 ms at 100,000
rows, where counting 100,000 stored queries by a filter takes 20 s (bench/delete_scale.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from enum import StrEnum
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

LEDGER_PREFIX = "owned."
# Row deletions in flight at once: round trips overlap without flooding the server.
PARALLEL_DELETES = 32


class Owned(StrEnum):
    QUERIES = "queries"  # query ids: the `queries` row and the `query_results` row
    CACHE = "cache"  # cache row ids (`<namespace>:<sha256>`)


def ledger_name(doc_id: str, kind: Owned) -> str:
    return f"{LEDGER_PREFIX}{doc_id}.{kind.value}"


class OwnershipLedger:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.db = db

    async def note(self, kind: Owned, doc_ids: Iterable[str], item_id: str) -> None:
        """`item_id` was made from each of `doc_ids` (noting it twice is harmless)."""
        await asyncio.gather(*(self._insert(ledger_name(doc_id, kind), item_id) for doc_id in set(doc_ids)))

    async def _insert(self, ledger: str, item_id: str) -> None:
        try:
            await self.db[ledger].insert_one({"_id": item_id})
        except DuplicateKeyError:
            pass

    async def items(self, doc_id: str, kind: Owned) -> list[str]:
        rows = await self.db[ledger_name(doc_id, kind)].find({}, {"_id": 1}).to_list(None)
        return [str(row["_id"]) for row in rows]

    async def count(self, doc_id: str, kind: Owned) -> int:
        """From the collection's statistics: no row is read (0 for a ledger never written)."""
        stats = await self.db.command("collStats", ledger_name(doc_id, kind))
        return int(stats.get("count", 0))

    async def drop(self, doc_id: str, kind: Owned) -> None:
        await self.db.drop_collection(ledger_name(doc_id, kind))

    async def documents(self) -> set[str]:
        """Doc ids that have a ledger (a document deleted while a late write noted it again)."""
        names = await self.db.list_collection_names()
        kinds = tuple(f".{kind.value}" for kind in Owned)
        return {name[len(LEDGER_PREFIX) : name.rindex(".")] for name in names
                if name.startswith(LEDGER_PREFIX) and name.endswith(kinds)}


async def remove_each(item_ids: list[str], remove: Callable[[str], Awaitable[Any]]) -> None:
    """`remove(id)` for every id, `PARALLEL_DELETES` at a time."""
    for start in range(0, len(item_ids), PARALLEL_DELETES):
        await asyncio.gather(*(remove(item_id) for item_id in item_ids[start : start + PARALLEL_DELETES]))
