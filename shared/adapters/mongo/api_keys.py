"""API keys in MongoDB: collection `api_keys`, `_id` = key id; the secret's SHA-256 only."""

from __future__ import annotations

from typing import Any

from pymongo import AsyncMongoClient
from pymongo.errors import DuplicateKeyError

from shared.model.api_keys import ApiKeyRecord
from shared.model.clock import utc_now


class MongoKeyStore:
    """The `KeyStore` (shared/ports/api_keys.py) on a MongoDB-protocol server."""

    def __init__(self, client: AsyncMongoClient[dict[str, Any]], db_name: str = "treerag") -> None:
        self.keys = client[db_name]["api_keys"]

    async def add(self, record: ApiKeyRecord) -> None:
        doc = record.model_dump(mode="json")
        doc["_id"] = record.key_id
        try:
            await self.keys.insert_one(doc)
        except DuplicateKeyError as exc:
            raise ValueError(f"key id {record.key_id} is taken") from exc

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        doc = await self.keys.find_one({"_id": key_id})
        return self._record(doc) if doc else None

    async def list(self) -> list[ApiKeyRecord]:
        records = [self._record(doc) for doc in await self.keys.find({}).to_list(None)]
        return sorted(records, key=lambda r: (r.created_at, r.key_id))

    async def revoke(self, key_id: str) -> bool:
        result = await self.keys.update_one(
            {"_id": key_id, "revoked_at": None}, {"$set": {"revoked_at": utc_now().isoformat()}}
        )
        if result.matched_count == 1:
            return True
        return await self.keys.find_one({"_id": key_id}, {"_id": 1}) is not None  # revoked before

    @staticmethod
    def _record(doc: dict[str, Any]) -> ApiKeyRecord:
        return ApiKeyRecord.model_validate({k: v for k, v in doc.items() if k != "_id"})
