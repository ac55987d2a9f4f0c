"""The indexer's composition root: its handlers from the stage's ports and settings."""

from __future__ import annotations

from services.indexer.handlers import IndexerHandlers
from services.indexer.settings import IndexerSettings
from shared.adapters.embeddings import make_embedder
from shared.adapters.llm import make_llm
from shared.stage import StagePorts


async def build(ports: StagePorts) -> IndexerHandlers:
    own = IndexerSettings()
    return IndexerHandlers(
        ports.repository, ports.bus, ports.ledger,
        max_pages=ports.settings.max_pages,
        llm=make_llm(ports.settings),
        page_delay_s=own.page_delay_ms / 1000,
        max_poll_interval_s=own.max_poll_interval_s,
        embedder=make_embedder(ports.settings),
        ocr=ports.settings.ocr,
        ocr_languages=ports.settings.ocr_languages,
        ocr_workers=ports.settings.ocr_workers,
    )
