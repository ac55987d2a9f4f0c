"""Compressor stage: `nodes.selected` -> `context.compressed`.

The selected whole pages arrive as references (shared/app/page_texts.py) and are read back from
the store, kept per tree version; `document.deleted` drops a document's."""

from __future__ import annotations

import asyncio
import logging

from services.compressor.compress import compress
from shared.adapters.logs import log_fields
from shared.adapters.metrics import TOKENS
from shared.app.page_texts import PageStore, PageTextCache, with_page_texts
from shared.app.query_failures import report_query_failure
from shared.model.delivery import Delivery, Failure, RecentKeys
from shared.model.events import ContextCompressed, DocumentDeleted, NodesSelected
from shared.model.query import NavigationSummary
from shared.ports.bus import Publisher
from shared.ports.queries import QueryStore

logger = logging.getLogger(__name__)

STAGE = "compressor"


class CompressorHandlers:
    def __init__(self, bus: Publisher, queries: QueryStore, repo: PageStore) -> None:
        self.bus = bus
        self.queries = queries
        self.pages = PageTextCache(repo)
        self.done = RecentKeys()

    async def on_nodes_selected(self, event: NodesSelected, delivery: Delivery) -> None:
        if event.query_id in self.done:
            logger.info("context already compressed; redelivery skipped")
            return
        passages = await with_page_texts(event.navigation.passages, event.documents, self.pages)
        context = await asyncio.to_thread(compress, event.question, passages, event.settings)
        TOKENS.labels(phase="before").observe(context.tokens_before)
        TOKENS.labels(phase="after").observe(context.tokens_after)
        timings = [*event.timings, delivery.timing()]
        await self.bus.publish(
            ContextCompressed(**{**event.carry(), "timings": timings},
                              navigation=NavigationSummary.of(event.navigation), context=context)
        )
        self.done.add(event.query_id)
        logger.info(
            "context compressed",
            extra=log_fields(tokens_before=context.tokens_before, tokens_after=context.tokens_after,
                             passages=len(context.passages)),
        )

    async def on_document_deleted(self, event: DocumentDeleted, delivery: Delivery) -> None:
        """Nothing of a deleted document's text stays in memory."""
        versions = self.pages.forget(event.doc_id)
        logger.info("deleted document forgotten", extra=log_fields(doc_id=event.doc_id, page_versions=versions))

    async def give_up(self, failure: Failure) -> None:
        await report_query_failure(self.bus, self.queries, failure)
