"""The repository the store tests run on: the embedded store, and MongoDB (FerretDB) when the
integration servers are up."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.mongo.store import MongoRepository, connect


@pytest.fixture(params=["embedded", pytest.param("mongo", marks=pytest.mark.integration)])
async def repo(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "embedded":
        yield EmbeddedRepository(tmp_path / "store")
        return
    infra = request.getfixturevalue("infra")
    client = connect(infra.mongo_url)
    name = f"store_{uuid.uuid4().hex[:8]}"
    repository = MongoRepository(client, name, owns_client=False)
    await repository.ensure_indexes()
    yield repository
    await client.drop_database(name)
    await client.close()
