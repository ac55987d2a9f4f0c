"""Which blob store a process uses: a folder when `TREERAG_BLOB_DIR` names one, else GridFS."""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from shared.adapters.blobs.folder import FolderBlobs
from shared.adapters.mongo.blobs import GridFsBlobs
from shared.ports.blobs import BlobStore
from shared.settings import Settings


def make_blob_store(settings: Settings, db: AsyncDatabase[dict[str, Any]]) -> BlobStore:
    if settings.blob_dir is not None:
        return FolderBlobs(settings.blob_dir)
    return GridFsBlobs(db)
