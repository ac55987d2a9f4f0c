"""Compressor service wiring: `python -m services.compressor` or `faststream run services.compressor.main:app`."""

from __future__ import annotations

from services.compressor.handlers import STAGE, CompressorHandlers
from shared.bus.delivery import Delivery, Failure
from shared.bus.runtime import StageRuntime
from shared.events import NodesSelected

runtime = StageRuntime(STAGE)
handlers: CompressorHandlers | None = None


async def wire() -> None:
    global handlers
    handlers = CompressorHandlers(runtime.bus, runtime.queries)


async def on_nodes_selected(event: NodesSelected, delivery: Delivery) -> None:
    assert handlers is not None
    await handlers.on_nodes_selected(event, delivery)


async def give_up(failure: Failure) -> None:
    assert handlers is not None
    await handlers.give_up(failure)


runtime.on_startup(wire)
runtime.subscribe(NodesSelected, on_nodes_selected, give_up=give_up)
app = runtime.app
