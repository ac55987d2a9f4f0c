"""Per-document keys in MongoDB (collection `document_keys`: `_id` = doc id, `key` = 32 random
bytes), kept in memory for a short while by each process that uses them.

A key is destroyed when its document's deletion starts. A process that read it before keeps its
copy at most `KEY_REUSE_S`: after that, a message sealed with it cannot be opened anywhere.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from bson.binary import Binary
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from shared.model.lru import Lru

COLLECTION = "document_keys"
KEY_BYTES = 32
# How long a process reuses a key it read; a deleted document's key is gone from every process
# this long after the deletion started.
KEY_REUSE_S = 30.0
# Keys held by one process (32 bytes each, with their document ids).
KEYS_HELD = 100_000


class MongoDocumentKeys:
    def __init__(self, db: AsyncDatabase[dict[str, Any]], reuse_s: float = KEY_REUSE_S) -> None:
        self.collection = db[COLLECTION]
        self.reuse_s = reuse_s
        self._held: Lru[str, tuple[bytes, float]] = Lru(KEYS_HELD)

    async def keys_for(self, doc_ids: Sequence[str], *, create: bool) -> dict[str, bytes]:
        now = time.monotonic()
        found: dict[str, bytes] = {}
        wanted = []
        for doc_id in dict.fromkeys(doc_ids):
            held = self._held.get(doc_id)
            if held is not None and now - held[1] < self.reuse_s:
                found[doc_id] = held[0]
            else:
                wanted.append(doc_id)
        if wanted:
            async for row in self.collection.find({"_id": {"$in": wanted}}):
                found[row["_id"]] = bytes(row["key"])
            if create:
                for doc_id in (d for d in wanted if d not in found):
                    found[doc_id] = await self._create(doc_id)
            for doc_id in wanted:
                if doc_id in found:
                    self._held.put(doc_id, (found[doc_id], now))
        return found

    async def _create(self, doc_id: str) -> bytes:
        key = os.urandom(KEY_BYTES)
        try:
            await self.collection.insert_one({"_id": doc_id, "key": Binary(key)})
        except DuplicateKeyError:  # another process made it first: theirs is the key
            row = await self.collection.find_one({"_id": doc_id})
            if row is None:  # made and destroyed in between: the document is being deleted
                raise
            return bytes(row["key"])
        return key

    async def destroy(self, doc_id: str) -> None:
        self._held.pop(doc_id)
        await self.collection.delete_one({"_id": doc_id})
