"""Where the bytes of uploaded files are kept, apart from the document store.

A file is written once by the gateway and read once by the indexer (and again when someone
downloads it); nothing queries it. Two implementations: a folder every process of one machine
shares (`shared/adapters/blobs/folder.py`) and GridFS in the document store for several machines
(`shared/adapters/mongo/blobs.py`). Keys are document ids.
"""

from __future__ import annotations

from typing import Protocol


class BlobStore(Protocol):
    @property
    def scheme(self) -> str:
        """Names the store in references (`<scheme>:<key>`), e.g. in upload events."""
        ...

    async def put(self, key: str, data: bytes) -> None:
        """Stored once per key: a key names one content, so a second put of it changes nothing."""
        ...

    async def get(self, key: str) -> bytes | None: ...

    async def delete(self, key: str) -> None:
        """Nothing happens when the key is not stored."""
        ...
