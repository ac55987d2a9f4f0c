"""Where conversations are kept, per tenant (the gateway's `/v1/chats`)."""

from __future__ import annotations

from typing import Protocol

from shared.model.chats import ChatThread, ChatTurn


class ChatStore(Protocol):
    async def create(self, thread: ChatThread) -> None: ...

    async def get(self, chat_id: str) -> ChatThread | None: ...

    async def recent(self, tenant: str, limit: int) -> list[ChatThread]:
        """The tenant's threads, the most recently active first."""
        ...

    async def turns(self, chat_id: str, last: int | None = None) -> list[ChatTurn]:
        """The thread's turns in order; only the `last` ones when given."""
        ...

    async def add_turn(self, turn: ChatTurn) -> bool:
        """Append a turn (its `turn` is the thread's count + 1); False when the thread is gone."""
        ...

    async def delete(self, chat_id: str) -> bool:
        """The thread and its turns; False when there was none."""
        ...

    async def forget_document(self, doc_id: str) -> int:
        """Remove every thread over `doc_id` or with a turn asked over or citing it (its answers
        quote the document); how many. Idempotent."""
        ...
