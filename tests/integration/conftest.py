"""Fixtures of the integration tests: the query stages and two gateways for the whole session,
an indexer per test that needs one (tests that kill or double it start their own)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until


@pytest.fixture(scope="session")
def stack(infra: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(
        kafka_bootstrap=infra.kafka_bootstrap,
        mongo_url=infra.mongo_url,
        namespace=f"it{uuid.uuid4().hex[:8]}",
        workdir=tmp_path_factory.mktemp("services"),
    )
    try:
        yield stack
    finally:
        stack.stop_all()


@pytest.fixture(scope="session")
def query_stages(stack: Stack) -> list[ServiceProcess]:
    stages = [stack.start_stage(name) for name in ("navigator", "compressor", "verifier")]
    for process in stages:
        stack.wait_consuming(process)
    return stages


@pytest.fixture(scope="session")
def api_key(stack: Stack) -> str:
    """An admin key of the default tenant, as `make up` prints one: the session's gateways carry it."""
    return stack.create_key("default", admin=True)


@pytest.fixture(scope="session")
def gateways(stack: Stack, query_stages: list[ServiceProcess], api_key: str) -> list[Gateway]:
    started = [stack.start_gateway(api_key), stack.start_gateway(api_key)]
    for gateway in started:
        wait_until(gateway.ready, 240, f"{gateway.process.name} /readyz", interval_s=0.5)
    return started


@pytest.fixture(scope="session")
def gateway(gateways: list[Gateway]) -> Gateway:
    return gateways[0]


@pytest.fixture
def indexer(stack: Stack) -> Iterator[ServiceProcess]:
    with stack.running("indexer") as process:
        yield process


@pytest.fixture(scope="module")
def indexer_for_module(stack: Stack) -> Iterator[ServiceProcess]:
    """One indexer for a whole module, so that its documents are indexed once."""
    with stack.running("indexer") as process:
        yield process


@pytest.fixture(scope="session")
def db(stack: Stack) -> Iterator[Any]:
    client = stack.mongo()
    try:
        yield client[stack.db_name]
    finally:
        client.close()
