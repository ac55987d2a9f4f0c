"""Verifier stage: `context.compressed` -> answer stored in `queries` -> `answer.verified`."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import os
import time
from collections.abc import Callable

from services.verifier.answer import answer_question
from services.verifier.calibration import calibrated
from services.verifier.models import VerifierModels
from shared.adapters.cache import AnswerCache
from shared.adapters.logs import log_fields
from shared.adapters.metrics import ABSTENTIONS, ANSWER_CONFIDENCE
from shared.app.page_texts import PageStore, PageTextCache
from shared.app.progress import report_progress
from shared.app.query_failures import query_seed, report_query_failure
from shared.model.delivery import Delivery, Failure, RecentKeys
from shared.model.documents import DocumentRecord
from shared.model.events import (
    AnswerVerified,
    ContextCompressed,
    DocumentDeleted,
    QueryOutcome,
    QueryProgress,
)
from shared.model.query import SentenceCheck
from shared.ports.bus import Publisher
from shared.ports.model_roles import AnswerGenerator
from shared.ports.queries import QueryStore

logger = logging.getLogger(__name__)

STAGE = "verifier"
# How long the answering thread stands aside once it has handed a streamed sentence to the loop.
SEND_YIELD_S = 0.001
# How often a model's answer being written goes on the bus: a message a token would cost more
# than the token; twenty a second reads as continuous.
DRAFT_INTERVAL_S = 0.05


class SentenceStream:
    """Each answer sentence of a streamed query put on the bus as soon as it is checked, and a
    model's answer as it is written: `tell` and `draft` are called on the worker thread that
    answers, and send on the handler's event loop."""

    def __init__(self, bus: Publisher, event: ContextCompressed, draft_interval_s: float = DRAFT_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bus = bus
        self.event = event
        self.loop = asyncio.get_running_loop()
        self.draft_interval_s = draft_interval_s
        self._clock = clock
        self._sends: list[concurrent.futures.Future[None]] = []
        self._drafted = ""  # the draft as last sent
        self._draft = ""  # the draft as last heard
        self._drafted_at = -math.inf

    def tell(self, index: int, check: SentenceCheck, shown: str) -> None:
        self._send_draft()  # the text a sentence comes from goes before its verdict
        self._send(QueryProgress.of(self.event, "sentence", index=index, sentence=check, text=shown))

    def draft(self, text: str) -> None:
        """Hear the answer so far; sent at most once a `draft_interval_s`, as what changed."""
        self._draft = text
        if self._clock() - self._drafted_at >= self.draft_interval_s:
            self._send_draft()

    def _send_draft(self) -> None:
        if self._draft == self._drafted:
            return
        kept = len(os.path.commonprefix([self._drafted, self._draft]))
        self._send(QueryProgress.of(self.event, "draft", index=kept, text=self._draft[kept:]))
        self._drafted, self._drafted_at = self._draft, self._clock()

    def _send(self, progress: QueryProgress) -> None:
        self._sends.append(asyncio.run_coroutine_threadsafe(report_progress(self.bus, progress), self.loop))
        # The answering thread holds the interpreter while it checks the next sentence; without a
        # pause the loop thread would wait a switch interval (5 ms) at each step of this send.
        time.sleep(SEND_YIELD_S)

    def sends(self) -> list[asyncio.Future[None]]:
        """The sends under way, to wait for on the loop."""
        return [asyncio.wrap_future(send) for send in self._sends]

    async def first_sent(self) -> None:
        """Wait until the first sentence (or draft) is on the bus, if one was sent."""
        if self._sends:
            await asyncio.wrap_future(self._sends[0])


class VerifierHandlers:
    def __init__(
        self,
        repo: PageStore,
        bus: Publisher,
        queries: QueryStore,
        generator: AnswerGenerator | None = None,
        cache: AnswerCache | None = None,
        models: VerifierModels | None = None,
    ) -> None:
        self.repo = repo
        self.bus = bus
        self.queries = queries
        self.done = RecentKeys()
        # Answers stored whose publication failed in this process (a handful while Kafka refuses).
        self.unpublished = RecentKeys(1000)
        self.pages = PageTextCache(repo)
        self.generator = generator
        self.cache = cache
        self.models = models or VerifierModels()

    @staticmethod
    def _cited_pages(event: ContextCompressed) -> dict[str, set[int]]:
        """The pages the context cites, of the documents the query was asked over (the
        navigator's, of the query's tenant) only."""
        versions = dict(event.documents)
        wanted: dict[str, set[int]] = {}
        for passage in event.context.passages:
            if passage.doc_id in versions or not event.documents:
                wanted.setdefault(passage.doc_id, set()).update(passage.pages)
        return wanted

    async def _records(self, doc_ids: set[str]) -> dict[str, DocumentRecord | None]:
        """Each document's record, read once per query: for its tenant and for whether its
        deletion has started (then it is None)."""
        return await self.repo.get_documents(sorted(doc_ids))

    async def _page_texts(self, event: ContextCompressed, wanted: dict[str, set[int]],
                          records: dict[str, DocumentRecord | None]) -> dict[tuple[str, int], str]:
        """Full text of every cited page, so sentences are checked against the page."""
        versions = dict(event.documents)
        found = await asyncio.gather(
            *(self.pages.texts_of(records[d], event.tenant, d, versions.get(d), p) for d, p in wanted.items())
        )
        return {(doc_id, n): text for doc_id, pages in zip(wanted, found, strict=True) for n, text in pages.items()}

    async def on_context_compressed(self, event: ContextCompressed, delivery: Delivery) -> None:
        if event.query_id in self.done:
            logger.info("query already answered; redelivery skipped")
            return
        wanted = self._cited_pages(event)
        records = await self._records(set(wanted) | {doc_id for doc_id, _ in event.documents})
        texts = await self._page_texts(event, wanted, records)
        navigation = event.navigation
        streamed = SentenceStream(self.bus, event) if event.progress else None
        answer = await asyncio.to_thread(
            answer_question,
            event.context,
            event.settings,
            navigation.mode,
            self.generator,
            lambda doc_id, page: texts.get((doc_id, page)),
            self.models.judge,
            self.models.word_vectors,
            {doc_id: record.card for doc_id, record in records.items() if record is not None and record.card},
            streamed.tell if streamed is not None else None,
            streamed.draft if streamed is not None and self.generator is not None else None,
        )
        answer = calibrated(answer, navigation.stats.answer_probability, self.models.calibration)
        outcome = QueryOutcome(
            answer=answer,
            mode=navigation.mode,
            mode_reason=navigation.mode_reason,
            stats=navigation.stats,
            tokens_before=event.context.tokens_before,
            tokens_after=event.context.tokens_after,
            warnings=navigation.warnings + answer.warnings,
            path=navigation.path,
        )
        # An answer navigated with lexical fallbacks (the model failed) is not kept: the next ask
        # should get the model's ranking. The key is the navigator's (an event without one is
        # not cached). Nor one over a document whose deletion has started: it would outlive it.
        cacheable = (self.cache is not None and bool(event.documents) and bool(event.answer_key)
                     and not navigation.stats.scorer_fallbacks
                     and all(records[doc_id] is not None for doc_id, _ in event.documents))
        timings = [*event.timings, delivery.timing()]
        seed = query_seed(event)
        if streamed is not None:
            # A streamed answer's first sentence is on the bus before the answer is stored and
            # sent (one send, under way since the sentence was checked): otherwise the last
            # sentence of a short answer can reach the client only with the answer.
            await streamed.first_sent()
        # Stored before it is published: a gateway that misses the event finds it here.
        if not await self.queries.mark_answered(event.query_id, outcome, timings, seed):
            await self._publish_stored(event)
            return
        ANSWER_CONFIDENCE.observe(answer.confidence)
        if answer.abstained:
            ABSTENTIONS.inc()
        cache_put = None
        if cacheable and self.cache is not None and event.answer_key:
            cache_put = self.cache.put(event.answer_key, outcome.model_dump(mode="json"),
                                       refs=[doc_id for doc_id, _ in event.documents])
        published = self._publish(AnswerVerified(**{**event.carry(), "timings": timings}, outcome=outcome))
        # The cache entry is not on the client's path: written while the answer is on its way
        # (a crash in between only costs a later recomputation). Sentences still being streamed
        # are not waited for before the answer goes.
        await asyncio.gather(published, *([cache_put] if cache_put is not None else []),
                             *(streamed.sends() if streamed is not None else []))
        self.done.add(event.query_id)
        logger.info(
            "answer verified",
            extra=log_fields(confidence=answer.confidence, abstained=answer.abstained,
                             citations=len(answer.citations)),
        )

    async def _publish(self, answer: AnswerVerified) -> None:
        try:
            await self.bus.publish(answer)
        except Exception:
            self.unpublished.add(answer.query_id)  # its redelivery publishes the stored answer
            raise
        self.unpublished.discard(answer.query_id)

    async def _publish_stored(self, event: ContextCompressed) -> None:
        """A redelivery of a query whose answer is stored already. Published again only when this
        process knows the publication failed: otherwise the earlier delivery published it, or died
        between storing and publishing — then a gateway still waiting finds the stored answer by
        polling (services/gateway/answers.py), and publishing could answer twice."""
        stored = await self.queries.get(event.query_id) if event.query_id in self.unpublished else None
        if stored is not None and stored.outcome is not None:
            await self._publish(AnswerVerified(**{**event.carry(), "timings": stored.timings}, outcome=stored.outcome))
            logger.info("stored answer published after a failed publication")
        else:
            logger.info("query answered by an earlier delivery; not published again")
        self.done.add(event.query_id)

    async def on_document_deleted(self, event: DocumentDeleted, delivery: Delivery) -> None:
        """Nothing of a deleted document stays in memory: its page texts and cached answers."""
        versions = self.pages.forget(event.doc_id)
        answers = await self.cache.forget_document(event.doc_id) if self.cache is not None else 0
        logger.info("deleted document forgotten", extra=log_fields(doc_id=event.doc_id, page_versions=versions,
                                                                  cached_answers=answers))

    async def give_up(self, failure: Failure) -> None:
        await report_query_failure(self.bus, self.queries, failure)
