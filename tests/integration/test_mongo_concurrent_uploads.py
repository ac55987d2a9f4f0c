"""Several documents stored at once on a fresh database, as when a user drops several PDFs on
the web app's upload zone: every write succeeds and every document is listed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from shared.adapters.mongo.store import MongoRepository, connect
from shared.model.documents import DocumentRecord

pytestmark = pytest.mark.integration

UPLOADS = 8


ROUNDS = 5  # the first writes race to create the database's bookkeeping rows: try it a few times


@pytest.fixture
async def client(infra: Any) -> AsyncIterator[Any]:
    client = connect(infra.mongo_url)
    try:
        yield client
    finally:
        await client.close()


async def test_documents_stored_at_the_same_moment_on_a_fresh_database_all_succeed(client: Any) -> None:
    records = [DocumentRecord(doc_id=f"{i:016x}", file_name=f"drop-{i}.pdf") for i in range(UPLOADS)]
    for _ in range(ROUNDS):
        name = f"store_{uuid.uuid4().hex[:8]}"
        repo = MongoRepository(client, name, owns_client=False)
        await repo.ensure_indexes()
        try:
            await asyncio.gather(*(repo.put_document(r) for r in records))
            listed = await repo.list_documents()
            assert sorted(r.doc_id for r in listed) == sorted(r.doc_id for r in records)
        finally:
            await client.drop_database(name)
