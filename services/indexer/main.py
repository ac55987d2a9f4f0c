"""Indexer service wiring: `python -m services.indexer` or `faststream run services.indexer.main:app`."""

from __future__ import annotations

from services.indexer.handlers import STAGE, IndexerHandlers
from services.indexer.settings import IndexerSettings
from shared.bus.delivery import Delivery
from shared.bus.runtime import StageRuntime
from shared.events import DocumentUploaded
from shared.embeddings import make_embedder
from shared.llm import make_llm


indexer_settings = IndexerSettings()
runtime = StageRuntime(STAGE)
handlers: IndexerHandlers | None = None


async def wire() -> None:
    global handlers
    handlers = IndexerHandlers(
        runtime.repo, runtime.bus, runtime.ledger,
        max_pages=runtime.settings.max_pages,
        llm=make_llm(runtime.settings),
        page_delay_s=indexer_settings.page_delay_ms / 1000,
        embedder=make_embedder(runtime.settings),
    )


async def on_uploaded(event: DocumentUploaded, delivery: Delivery) -> None:
    assert handlers is not None
    await handlers.on_uploaded(event, delivery)


async def give_up(event: DocumentUploaded, error_type: str, reason: str) -> None:
    assert handlers is not None
    await handlers.give_up(event, error_type, reason)


runtime.on_startup(wire)
runtime.subscribe(
    DocumentUploaded, on_uploaded, give_up=give_up,
    max_poll_interval_ms=int(indexer_settings.max_poll_interval_s * 1000),
    # A PDF takes seconds to minutes: counting each attempt in MongoDB costs nothing by comparison
    # and lets a PDF that kills the process end in the DLQ instead of crash-looping the stage.
    durable_attempts=True,
)
app = runtime.app
