"""Per-document keys in memory, for a process that has no store of them (tests, benchmarks)."""

from __future__ import annotations

import os
from collections.abc import Sequence

KEY_BYTES = 32


class InMemoryDocumentKeys:
    def __init__(self) -> None:
        self.keys: dict[str, bytes] = {}

    async def keys_for(self, doc_ids: Sequence[str], *, create: bool) -> dict[str, bytes]:
        if create:
            for doc_id in doc_ids:
                self.keys.setdefault(doc_id, os.urandom(KEY_BYTES))
        return {doc_id: self.keys[doc_id] for doc_id in doc_ids if doc_id in self.keys}

    async def destroy(self, doc_id: str) -> None:
        self.keys.pop(doc_id, None)
