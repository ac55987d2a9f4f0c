"""Conversations in memory: the one-process `treerag chat` and the tests."""

from __future__ import annotations

from shared.model.chats import ChatThread, ChatTurn
from shared.model.clock import utc_now


class InMemoryChatStore:
    def __init__(self) -> None:
        self.threads: dict[str, ChatThread] = {}
        self.turns_of: dict[str, list[ChatTurn]] = {}

    async def create(self, thread: ChatThread) -> None:
        self.threads[thread.chat_id] = thread
        self.turns_of[thread.chat_id] = []

    async def get(self, chat_id: str) -> ChatThread | None:
        return self.threads.get(chat_id)

    async def recent(self, tenant: str, limit: int) -> list[ChatThread]:
        mine = [t for t in self.threads.values() if t.tenant == tenant]
        return sorted(mine, key=lambda t: t.updated_at, reverse=True)[:limit]

    async def turns(self, chat_id: str, last: int | None = None) -> list[ChatTurn]:
        turns = self.turns_of.get(chat_id, [])
        return list(turns[-last:] if last else turns)

    async def add_turn(self, turn: ChatTurn) -> bool:
        thread = self.threads.get(turn.chat_id)
        if thread is None:
            return False
        turn = turn.model_copy(update={"turn": thread.turns + 1})
        self.turns_of[turn.chat_id].append(turn)
        self.threads[turn.chat_id] = thread.model_copy(update={"turns": turn.turn, "updated_at": utc_now()})
        return True

    async def delete(self, chat_id: str) -> bool:
        self.turns_of.pop(chat_id, None)
        return self.threads.pop(chat_id, None) is not None

    async def forget_document(self, doc_id: str) -> int:
        gone = [chat_id for chat_id, thread in self.threads.items()
                if doc_id in thread.doc_ids or any(doc_id in t.documents for t in self.turns_of.get(chat_id, []))]
        for chat_id in gone:
            await self.delete(chat_id)
        return len(gone)
