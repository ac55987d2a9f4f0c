"""Navigator stage: `query.received` -> `nodes.selected` (or `query.failed`)."""

from __future__ import annotations

import asyncio
import logging
import time

from services.navigator.navigate import navigate
from services.verifier.cache_key import query_answer_key
from shared.bus.broker import Bus
from shared.bus.delivery import Delivery, Failure
from shared.bus.ledger import RecentKeys
from shared.cache import AnswerCache
from shared.events import AnswerVerified, NodesSelected, QueryEvent, QueryFailed, QueryOutcome, QueryReceived
from shared.logs import log_fields
from shared.metrics import NODES_VISITED
from shared.ports import NodeScorer
from shared.store.queries import MongoQueryRepository, QueryRecord
from treerag.pipeline import NoDocumentsError, QueryEngine

logger = logging.getLogger(__name__)

STAGE = "navigator"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def query_failure(event: QueryEvent, stage: str, error_type: str, reason: str) -> Failure:
    """A failure a stage decides on itself (not the delivery layer's give-up)."""
    return Failure(stage, event.TOPIC, event.query_id, error_type, reason, 1, tenant=event.tenant,
                   deadline=event.deadline, timings=tuple(event.timings))


async def report_query_failure(bus: Bus, queries: MongoQueryRepository, failure: Failure) -> None:
    """Tell the client, from ids only: store the failure unless the query has a result already,
    and publish `query.failed` when this call stored it (a query fails once). When the store
    cannot be written, `query.failed` is still published, then the store error raised."""
    if failure.key is None:
        logger.warning("a message without a query id failed; no query to report it on")
        return
    try:
        stored = await queries.mark_failed(failure.key, failure.stage, failure.reason, tenant=failure.tenant)
    except Exception:
        await _publish_failure(bus, failure)
        raise
    if stored:
        await _publish_failure(bus, failure)


async def _publish_failure(bus: Bus, failure: Failure) -> None:
    assert failure.key is not None
    await bus.publish(QueryFailed(
        query_id=failure.key, tenant=failure.tenant, deadline=failure.deadline, timings=list(failure.timings),
        producer=failure.stage, stage=failure.stage, reason=failure.reason, error_type=failure.error_type,
    ))


class NavigatorHandlers:
    def __init__(
        self,
        engine: QueryEngine,
        bus: Bus,
        queries: MongoQueryRepository,
        scorer: NodeScorer | None = None,
        cache: AnswerCache | None = None,
        generator: str = "extractive",
    ) -> None:
        self.engine = engine
        self.bus = bus
        self.queries = queries
        self.done = RecentKeys()
        self.scorer = scorer
        self.cache = cache
        self.generator = generator

    async def on_query_received(self, event: QueryReceived, delivery: Delivery) -> None:
        if event.query_id in self.done:
            logger.info("query already navigated; redelivery skipped")
            return
        started = time.perf_counter()
        try:
            indexes = await self.engine.indexes(event.doc_ids or None)
        except NoDocumentsError as exc:
            failure = query_failure(event, STAGE, type(exc).__name__, str(exc))
            await report_query_failure(self.bus, self.queries, failure)
            self.done.add(event.query_id)
            return
        documents = [(ix.doc_id, ix.record.version) for ix in indexes]
        loaded = time.perf_counter()
        if await self._answer_from_cache(event, documents, delivery):
            return
        looked_up = time.perf_counter()
        # Traversal is CPU work: a worker thread keeps the consumer's heartbeats going.
        scorer = self.scorer if event.settings.llm_scoring else None
        result = await asyncio.to_thread(navigate, event.question, indexes, event.settings, scorer)
        navigated = time.perf_counter()
        NODES_VISITED.labels(mode=result.mode).observe(result.stats.nodes_visited)
        timings = [*event.timings, delivery.timing()]
        carried = {**event.carry(), "timings": timings, "documents": documents}
        await self.bus.publish(NodesSelected(**carried, navigation=result))
        self.done.add(event.query_id)
        # Where a slow query's time went, without a profiler.
        logger.info(
            "nodes selected",
            extra=log_fields(mode=result.mode, passages=len(result.passages), visited=result.stats.nodes_visited,
                             load_ms=_ms(loaded - started), cache_ms=_ms(looked_up - loaded),
                             navigate_ms=_ms(navigated - looked_up), publish_ms=_ms(time.perf_counter() - navigated)),
        )

    async def _answer_from_cache(
        self, event: QueryReceived, documents: list[tuple[str, int]], delivery: Delivery
    ) -> bool:
        """A question asked before over the same document versions and settings is answered
        from the cache: straight to `answer.verified`, skipping the other stages."""
        if self.cache is None:
            return False
        key = query_answer_key(event.question, documents, event.settings, self.generator)
        cached = await self.cache.get(key)
        if cached is None:
            return False
        outcome = QueryOutcome.model_validate(cached)
        timings = [*event.timings, delivery.timing()]
        seed = QueryRecord(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                           settings=event.settings, tenant=event.tenant)
        await self.queries.mark_answered(event.query_id, outcome, timings, seed)
        carried = {**event.carry(), "timings": timings, "documents": documents}
        await self.bus.publish(AnswerVerified(**carried, outcome=outcome, producer=STAGE))
        self.done.add(event.query_id)
        logger.info("answered from the cache")
        return True

    async def give_up(self, failure: Failure) -> None:
        await report_query_failure(self.bus, self.queries, failure)
