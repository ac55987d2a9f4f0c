"""A request over its time budget: 503 naming what is down, or the gateway when Kafka and MongoDB
both answer (the work itself was slow), never a backend that is up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from services.gateway.outages import install_outage_handling
from shared.settings import Settings


async def up() -> bool:
    return True


async def down() -> bool:
    return False


async def silent() -> bool:
    await asyncio.sleep(30)
    return True


def slow_app(probes: dict[str, Callable[[], Awaitable[Any]]]) -> TestClient:
    app = FastAPI()
    install_outage_handling(app, Settings(request_timeout_s=0.2, retry_after_s=3), lambda: probes)

    @app.get("/slow")
    async def slow() -> dict[str, str]:
        await asyncio.sleep(5)
        return {"done": "late"}

    return TestClient(app)


def test_a_slow_request_with_both_backends_up_blames_the_gateway() -> None:
    response = slow_app({"Kafka": up, "MongoDB": up}).get("/slow")
    assert response.status_code == 503 and response.headers["Retry-After"] == "3"
    body = response.json()
    assert body["unavailable"] == "the gateway"
    assert "Kafka and MongoDB answer" in body["detail"] and "0.2 s" in body["detail"]


def test_a_slow_request_names_the_backends_that_do_not_answer() -> None:
    body = slow_app({"Kafka": down, "MongoDB": up}).get("/slow").json()
    assert body["unavailable"] == "Kafka"
    body = slow_app({"Kafka": up, "MongoDB": silent}).get("/slow").json()
    assert body["unavailable"] == "MongoDB"
    body = slow_app({"Kafka": down, "MongoDB": silent}).get("/slow").json()
    assert body["unavailable"] == "Kafka and MongoDB"


async def stubborn() -> bool:
    """A ping whose driver takes seconds to give up once cancelled (server selection)."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        await asyncio.shield(asyncio.sleep(3))
        raise
    return True


def test_a_ping_slow_to_give_up_is_named_down_without_being_waited_for() -> None:
    from services.gateway.outages import down_backends

    async def probe() -> tuple[list[str], float]:
        loop = asyncio.get_running_loop()
        started = loop.time()
        found = await down_backends({"Kafka": up, "MongoDB": stubborn}, timeout_s=0.2)
        return found, loop.time() - started

    found, took = asyncio.run(probe())
    assert found == ["MongoDB"]
    assert took < 2.0  # not the three seconds the cancelled ping spends giving up
