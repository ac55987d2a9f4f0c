"""The per-document keys that seal a document's text on the bus (shared/adapters/sealing.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class DocumentKeys(Protocol):
    async def keys_for(self, doc_ids: Sequence[str], *, create: bool) -> dict[str, bytes]:
        """The key of each of `doc_ids` that has one; with `create`, one is made for each that
        has none (two processes making one at once end up with the same)."""
        ...

    async def destroy(self, doc_id: str) -> None:
        """Forget `doc_id`'s key for good: what it sealed can no longer be read."""
        ...
