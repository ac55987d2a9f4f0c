"""Conversations in MongoDB: collection `chats` (`_id` = chat id) and `chat_turns` (`_id` =
`<chat id>:<turn, 6 digits>`), so a thread's turns are one `_id` range whatever the store holds.
Each turn keeps the documents it was asked over or cites (`docs`, indexed): deleting a document
finds its threads with one indexed look-up, not a scan of every conversation."""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, DESCENDING, ReturnDocument
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from shared.model.chats import ChatThread, ChatTurn
from shared.model.clock import utc_now

APPEND_ATTEMPTS = 50

def _turn_id(chat_id: str, turn: int) -> str:
    return f"{chat_id}:{turn:06d}"


def _range(chat_id: str) -> dict[str, Any]:
    return {"_id": {"$gt": f"{chat_id}:", "$lt": f"{chat_id};"}}  # ";" sorts right after ":"


class MongoChatStore:
    """The `ChatStore` (shared/ports/chats.py) on a MongoDB-protocol server."""

    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.threads = db["chats"]
        self.turn_rows = db["chat_turns"]

    async def ensure_indexes(self) -> None:
        await self.threads.create_index([("tenant", ASCENDING), ("updated_at", DESCENDING)])
        await self.threads.create_index([("doc_ids", ASCENDING)])
        await self.turn_rows.create_index([("docs", ASCENDING)])

    async def create(self, thread: ChatThread) -> None:
        await self.threads.insert_one({"_id": thread.chat_id, **thread.model_dump(mode="json"),
                                       "updated_at": thread.updated_at})

    async def get(self, chat_id: str) -> ChatThread | None:
        doc = await self.threads.find_one({"_id": chat_id})
        return ChatThread.model_validate(doc) if doc else None

    async def recent(self, tenant: str, limit: int) -> list[ChatThread]:
        docs = await self.threads.find({"tenant": tenant}).sort("updated_at", DESCENDING).limit(limit).to_list(None)
        return [ChatThread.model_validate(doc) for doc in docs]

    async def turns(self, chat_id: str, last: int | None = None) -> list[ChatTurn]:
        cursor = self.turn_rows.find(_range(chat_id)).sort("_id", DESCENDING if last else ASCENDING)
        docs = await (cursor.limit(last) if last else cursor).to_list(None)
        turns = [ChatTurn.model_validate(doc["turn_row"]) for doc in docs]
        return sorted(turns, key=lambda t: t.turn)

    async def add_turn(self, turn: ChatTurn) -> bool:
        # FerretDB does not apply concurrent `$inc`s atomically (two writers may read the same
        # count): the turn row's unique `_id` decides, and the loser takes the next number.
        for _ in range(APPEND_ATTEMPTS):
            thread = await self.threads.find_one_and_update(
                {"_id": turn.chat_id}, {"$inc": {"turns": 1}, "$set": {"updated_at": utc_now()}},
                return_document=ReturnDocument.AFTER)
            if thread is None:
                return False
            numbered = turn.model_copy(update={"turn": int(thread["turns"])})
            try:
                await self.turn_rows.insert_one({"_id": _turn_id(turn.chat_id, numbered.turn), "chat_id": turn.chat_id,
                                                 "docs": sorted(turn.documents),
                                                 "turn_row": numbered.model_dump(mode="json")})
            except DuplicateKeyError:
                continue
            return True
        raise RuntimeError(f"no free turn number after {APPEND_ATTEMPTS} attempts; ask again")

    async def delete(self, chat_id: str) -> bool:
        await self.turn_rows.delete_many(_range(chat_id))
        result = await self.threads.delete_one({"_id": chat_id})
        return result.deleted_count == 1

    async def forget_document(self, doc_id: str) -> int:
        threads = {doc["_id"] for doc in await self.threads.find({"doc_ids": doc_id}, {"_id": 1}).to_list(None)}
        threads |= {doc["chat_id"] for doc in await self.turn_rows.find({"docs": doc_id}, {"chat_id": 1}).to_list(None)}
        for chat_id in sorted(threads):
            await self.delete(chat_id)
        return len(threads)
