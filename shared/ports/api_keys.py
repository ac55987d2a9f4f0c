"""Where API keys are kept (hashed): the gateway looks them up, `treerag keys` manages them."""

from __future__ import annotations

from typing import Protocol

from shared.model.api_keys import ApiKeyRecord


class KeyLookup(Protocol):
    async def get(self, key_id: str) -> ApiKeyRecord | None: ...


class KeyStore(KeyLookup, Protocol):
    async def add(self, record: ApiKeyRecord) -> None:
        """Store a new key; raises ValueError when its id is taken."""
        ...

    async def list(self) -> list[ApiKeyRecord]:
        """Every key, revoked ones included, oldest first."""
        ...

    async def revoke(self, key_id: str) -> bool:
        """Mark the key revoked (kept, so `list` shows it); False when no such key exists."""
        ...
