"""Navigator stage: `query.received` -> `nodes.selected` (or `query.failed`); `tree.built`
warms its index cache and `document.deleted` / rebuilds invalidate it."""

from __future__ import annotations

import asyncio
import functools
import logging
import time

from services.navigator.index_cache import IndexSource, NoDocumentsError
from services.navigator.models import NavigatorModels
from services.navigator.navigate import navigate
from shared.adapters.cache import AnswerCache
from shared.adapters.logs import log_fields
from shared.adapters.metrics import NODES_VISITED
from shared.app.answer_key import EXTRACTIVE, query_answer_key
from shared.app.progress import report_progress
from shared.app.query_failures import query_failure, query_seed, report_query_failure
from shared.model.delivery import Delivery, Failure, RecentKeys
from shared.model.events import (
    PROGRESS_PAGES_MAX,
    AnswerVerified,
    DocumentDeleted,
    NodesSelected,
    QueryOutcome,
    QueryProgress,
    QueryReceived,
    TreeBuilt,
)
from shared.model.query import NavigationResult
from shared.ports.bus import Publisher
from shared.ports.model_roles import NodeScorer
from shared.ports.queries import QueryStore

logger = logging.getLogger(__name__)

STAGE = "navigator"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


class NavigatorHandlers:
    def __init__(
        self,
        indexes: IndexSource,
        bus: Publisher,
        queries: QueryStore,
        *,
        models: NavigatorModels,
        scorer: NodeScorer | None = None,
        cache: AnswerCache | None = None,
        answered_by: str = EXTRACTIVE,
        warm: bool = True,
    ) -> None:
        self.indexes = indexes
        self.warm = warm
        self.bus = bus
        self.queries = queries
        self.done = RecentKeys()
        self.scorer = scorer
        self.cache = cache
        self.answered_by = answered_by  # the answer-cache key names what answers
        # and the models that rank pages (loaded once by the composition root)
        self.models = models
        self.ranker = self.models.identity()

    async def on_tree_built(self, event: TreeBuilt, delivery: Delivery) -> None:
        """A new or rebuilt tree: the older index goes; the new one is built now, before a query
        waits for it, when warming is on (else by the first query that asks the document)."""
        self.indexes.forget(event.doc_id)
        if self.warm:
            await self.indexes.warm(event.doc_id)

    async def on_document_deleted(self, event: DocumentDeleted, delivery: Delivery) -> None:
        """Nothing of a deleted document stays in memory: its index and cached answers."""
        self.indexes.forget(event.doc_id)
        answers = await self.cache.forget_document(event.doc_id) if self.cache is not None else 0
        logger.info("deleted document forgotten", extra=log_fields(doc_id=event.doc_id, cached_answers=answers))

    async def on_query_received(self, event: QueryReceived, delivery: Delivery) -> None:
        if event.query_id in self.done:
            logger.info("query already navigated; redelivery skipped")
            return
        started = time.perf_counter()
        try:
            indexes = await self.indexes.indexes(event.doc_ids or None, event.tenant)
        except NoDocumentsError as exc:
            failure = query_failure(event, STAGE, type(exc).__name__, str(exc))
            await report_query_failure(self.bus, self.queries, failure)
            self.done.add(event.query_id)
            return
        documents = [(ix.doc_id, ix.record.version) for ix in indexes]
        loaded = time.perf_counter()
        key = self.answer_key(event, documents)
        if await self._answer_from_cache(event, documents, key, delivery):
            return
        looked_up = time.perf_counter()
        # Traversal is CPU work: a worker thread keeps the consumer's heartbeats going.
        scorer = self.scorer if event.settings.llm_scoring else None
        result = await asyncio.to_thread(functools.partial(navigate, models=self.models), event.question, indexes,
                                         event.settings, scorer)
        navigated = time.perf_counter()
        NODES_VISITED.labels(mode=result.mode).observe(result.stats.nodes_visited)
        timings = [*event.timings, delivery.timing()]
        carried = {**event.carry(), "timings": timings, "documents": documents, "answer_key": key}
        selected = self.bus.publish(NodesSelected(**carried, navigation=result))
        if event.progress:
            await asyncio.gather(selected, report_progress(self.bus, routed(event, documents, result)))
        else:
            await selected
        self.done.add(event.query_id)
        # Where a slow query's time went, without a profiler.
        logger.info(
            "nodes selected",
            extra=log_fields(mode=result.mode, passages=len(result.passages), visited=result.stats.nodes_visited,
                             load_ms=_ms(loaded - started), cache_ms=_ms(looked_up - loaded),
                             navigate_ms=_ms(navigated - looked_up), publish_ms=_ms(time.perf_counter() - navigated)),
        )

    def answer_key(self, event: QueryReceived, documents: list[tuple[str, int]]) -> str:
        """The answer-cache key: it names the ranking model too, so a refitted model never
        serves answers the previous one ranked, and the tenant, so no tenant gets another's."""
        return query_answer_key(event.question, documents, event.settings, self.answered_by,
                                ranker=self.ranker, tenant=event.tenant)

    async def _answer_from_cache(
        self, event: QueryReceived, documents: list[tuple[str, int]], key: str, delivery: Delivery
    ) -> bool:
        """A question asked before over the same document versions and settings is answered
        from the cache: straight to `answer.verified`, skipping the other stages."""
        if self.cache is None:
            return False
        cached = await self.cache.get(key)
        if cached is None:
            return False
        outcome = QueryOutcome.model_validate(cached)
        timings = [*event.timings, delivery.timing()]
        # Published by the delivery that stored it only, as the verifier does: never twice.
        if await self.queries.mark_answered(event.query_id, outcome, timings, query_seed(event)):
            carried = {**event.carry(), "timings": timings, "documents": documents, "answer_key": key}
            await self.bus.publish(AnswerVerified(**carried, outcome=outcome, producer=STAGE))
            logger.info("answered from the cache")
        self.done.add(event.query_id)
        return True

    async def give_up(self, failure: Failure) -> None:
        await report_query_failure(self.bus, self.queries, failure)


def routed(event: QueryReceived, documents: list[tuple[str, int]], result: NavigationResult) -> QueryProgress:
    """What a streaming client is told once the navigator has chosen: the documents asked over and
    the pages it will read, best first."""
    pages = list(dict.fromkeys((p.doc_id, n) for p in result.passages for n in p.pages))
    progress = event.model_copy(update={"documents": documents})
    return QueryProgress.of(progress, "routed", pages=pages[:PROGRESS_PAGES_MAX])
