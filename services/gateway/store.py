"""What the gateway asks of the document store beyond the stages' `Repository`."""

from __future__ import annotations

from typing import Protocol

from shared.ports.blobs import BlobStore
from shared.ports.repository import DocumentListing, Repository


class GatewayStore(Repository, DocumentListing, Protocol):
    """The repository, and what only the gateway asks of it: listing pages, the file store, a
    ping, and the rows a deletion leaves to remove late."""

    @property
    def blobs(self) -> BlobStore: ...

    async def ping(self) -> None: ...

    async def forget_cached(self, doc_id: str) -> int:
        """Remove the cached answers made from `doc_id`; how many."""
        ...

    async def owned_leftovers(self) -> list[str]:
        """Doc ids without a record whose stored queries or cached answers remain."""
        ...
