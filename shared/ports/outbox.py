"""Where owed publications wait until the broker takes them (the transactional outbox)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from shared.model.outbox import OutboxEntry


class Outbox(Protocol):
    async def add(self, entry: OutboxEntry) -> None: ...

    async def claim_due(self, now: datetime, until: datetime, limit: int) -> list[OutboxEntry]:
        """Entries due by `now`, each pushed to `until` so that no other relay takes it meanwhile."""
        ...

    async def reschedule(self, entry_id: str, due_at: datetime) -> None: ...

    async def remove(self, entry_id: str) -> None:
        """The broker has it."""
        ...

    async def discard(self, key: str) -> int:
        """Drop every owed event of one document or query (it was deleted); how many."""
        ...

    async def pending(self) -> int: ...
