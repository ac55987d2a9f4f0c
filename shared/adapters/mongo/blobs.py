"""File bytes in GridFS: the `BlobStore` (shared/ports/blobs.py) for deployments over several
machines, where MongoDB stores binary as it is.

Written in the GridFS layout, so GridFS tools read it, spread over `BUCKETS` buckets `pdfs.<h>`
(the first hex digit <h> of sha256(key)), file id = key, but with chunk ids "<key>:<n>":
reading them back is a few `_id` lookups, where GridFS's own reader filters on `files_id`
(which FerretDB answers by scanning the bucket). The files row is written last and marks the
file complete. Files written by a standard GridFS client, or into the single bucket `pdfs`
used before buckets, are still read.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
from typing import Any

from gridfs import AsyncGridFSBucket
from gridfs.errors import NoFile
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from shared.model.clock import utc_now

logger = logging.getLogger(__name__)

SCHEME = "gridfs"
CHUNK_BYTES = 4 * 1024 * 1024
BUCKETS = 16
LEGACY_BUCKET = "pdfs"


def bucket_name(key: str) -> str:
    """The GridFS bucket holding a key's file (`<name>.files`, `<name>.chunks`)."""
    return f"{LEGACY_BUCKET}.{int(hashlib.sha256(key.encode()).hexdigest()[0], 16) % BUCKETS:x}"


class GridFsBlobs:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.db = db

    @property
    def scheme(self) -> str:
        return SCHEME

    async def put(self, key: str, data: bytes) -> None:
        bucket = bucket_name(key)
        files = self.db[f"{bucket}.files"]
        if await files.find_one({"_id": key}, {"_id": 1}):
            return
        chunks = [
            {"_id": f"{key}:{n}", "files_id": key, "n": n, "data": data[start : start + CHUNK_BYTES]}
            for n, start in enumerate(range(0, len(data), CHUNK_BYTES))
        ]
        for chunk in chunks:  # one at a time: a few MB per insert
            try:
                await self.db[f"{bucket}.chunks"].insert_one(chunk)
            except DuplicateKeyError:
                # Left by an attempt that died midway (or a concurrent upload of the same bytes).
                await self.db[f"{bucket}.chunks"].replace_one({"_id": chunk["_id"]}, chunk, upsert=True)
        try:
            await files.insert_one(
                {"_id": key, "length": len(data), "chunkSize": CHUNK_BYTES, "uploadDate": utc_now(),
                 "filename": f"{key}.pdf", "metadata": {}}
            )
        except DuplicateKeyError:
            logger.info("file already stored by a concurrent upload", extra={"fields": {"key": key}})

    async def get(self, key: str) -> bytes | None:
        bucket = bucket_name(key)
        files = await self.db[f"{bucket}.files"].find_one({"_id": key})
        if files is None:
            return await self._read_gridfs(LEGACY_BUCKET, key)
        count = math.ceil(int(files["length"]) / int(files["chunkSize"]))
        rows = await asyncio.gather(
            *(self.db[f"{bucket}.chunks"].find_one({"_id": f"{key}:{n}"}, {"data": 1}) for n in range(count))
        )
        if any(row is None for row in rows):
            # Written by a standard GridFS client (chunk ids of its own): read it the GridFS way.
            return await self._read_gridfs(bucket, key)
        return b"".join(bytes(row["data"]) for row in rows if row is not None)

    async def delete(self, key: str) -> None:
        """Chunks first (by `_id`, the last first), the files row last: a deletion stopped
        midway is finished by calling again. A file written by a standard GridFS client (or into
        the bucket of earlier releases) has chunk ids of its own: those are found by `files_id`,
        a scan of that bucket, which only such files pay."""
        bucket = bucket_name(key)
        chunks = self.db[f"{bucket}.chunks"]
        count = 0
        while await chunks.find_one({"_id": f"{key}:{count}"}, {"_id": 1}) is not None:
            count += 1
        files = self.db[f"{bucket}.files"]
        stored = await files.find_one({"_id": key}, {"length": 1, "chunkSize": 1})
        for n in reversed(range(count)):
            await chunks.delete_one({"_id": f"{key}:{n}"})
        if stored is not None and count == 0 and int(stored.get("length", 0)) > 0:
            await chunks.delete_many({"files_id": key})
        await files.delete_one({"_id": key})
        legacy = self.db[f"{LEGACY_BUCKET}.files"]
        if await legacy.find_one({"_id": key}, {"_id": 1}) is not None:
            await self.db[f"{LEGACY_BUCKET}.chunks"].delete_many({"files_id": key})
            await legacy.delete_one({"_id": key})

    async def _read_gridfs(self, bucket: str, key: str) -> bytes | None:
        try:
            stream = await AsyncGridFSBucket(self.db, bucket_name=bucket).open_download_stream(key)
        except NoFile:
            return None
        return await stream.read()
