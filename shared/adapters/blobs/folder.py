"""File bytes in a folder: the `BlobStore` (shared/ports/blobs.py) for processes of one machine.

The gateway writes and the indexers read the same folder, so it must be one every process of
the deployment reaches (one machine, or a volume mounted read-write by all of them). Kept out of
the document store because FerretDB on SQLite stores binary as base64 inside JSON: converting a
PDF there and back cost more CPU than everything else the store does for a page.

Layout: `<root>/<first two characters of the key>/<key>`; a file is written to a temporary name
and renamed, so a reader sees all of it or nothing.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
from pathlib import Path

SCHEME = "file"
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{1,200}")


class BlobKeyError(ValueError):
    """A key that could name a path outside the store."""


class FolderBlobs:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def scheme(self) -> str:
        return SCHEME

    def path(self, key: str) -> Path:
        if not _KEY.fullmatch(key) or ".." in key:
            raise BlobKeyError(f"blob key {key!r} is not a document id (letters, digits, '_', '-', '.')")
        return self.root / key[:2] / key

    async def put(self, key: str, data: bytes) -> None:
        await asyncio.to_thread(self._put, self.path(key), data)

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, self.path(key))

    async def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    @staticmethod
    def _put(path: Path, data: bytes) -> None:
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "wb") as out:
                out.write(data)
                out.flush()
                # On disk before the upload is acknowledged and the indexer told to read it.
                os.fsync(out.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def _get(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
