"""The one way a declared `Stage` runs on Kafka and MongoDB: `python -m services.<stage>`."""

from __future__ import annotations

import asyncio
import importlib
import logging
from typing import Any, TypeVar

from shared.adapters.kafka.runtime import StageRuntime
from shared.adapters.logs import configure_service_logging, log_fields
from shared.adapters.metrics import export_known_series
from shared.settings import get_settings
from shared.stage import Stage, StagePorts

logger = logging.getLogger(__name__)

H = TypeVar("H")


async def subscribe_stage(stage: Stage[H], runtime: StageRuntime, ports: StagePorts) -> H:
    """Build the stage's handlers from `ports` and subscribe each of its routes on `runtime`."""
    handlers = await stage.build(ports)
    routes = stage.routes(handlers)
    export_known_series(
        stage.name,
        consumed=[runtime.bus.topic(r.consumes.TOPIC) for r in routes if not r.broadcast],
        produced=[runtime.bus.topic(event.TOPIC) for event in stage.produces],
    )
    for route in routes:
        if route.broadcast:
            runtime.subscribe_broadcast(route.consumes, route.handle)
        else:
            runtime.subscribe(
                route.consumes, route.handle, give_up=route.give_up,
                max_poll_interval_ms=route.max_poll_interval_ms, durable_attempts=route.durable_attempts,
            )
    logger.info("stage built", extra=log_fields(stage=stage.name, consumes=[r.consumes.TOPIC for r in routes]))
    return handlers


def attach(stage: Stage[Any], runtime: StageRuntime | None = None) -> StageRuntime:
    """A runtime whose startup builds the stage's handlers from its ports and subscribes each
    route (before the broker starts consuming)."""
    runtime = runtime or StageRuntime(stage.name)

    async def build_and_subscribe() -> None:
        ports = StagePorts(
            settings=runtime.settings, repository=runtime.repo, queries=runtime.queries,
            ledger=runtime.ledger, bus=runtime.bus,
        )
        await subscribe_stage(stage, runtime, ports)

    runtime.on_startup(build_and_subscribe)
    return runtime


def run_stage(stage: Stage[Any]) -> None:
    """JSON logs, run until SIGTERM/SIGINT, then stop gracefully."""
    configure_service_logging(get_settings())
    runtime = attach(stage)

    async def main() -> None:
        try:
            await runtime.app.run()
        finally:
            await runtime.close()

    asyncio.run(main())


def run_stage_package(package: str) -> None:
    """`python -m services.<stage>`: run the `STAGE` its `main` module declares."""
    run_stage(importlib.import_module(f"{package}.main").STAGE)
