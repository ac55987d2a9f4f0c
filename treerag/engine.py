"""The query pipeline in one process: the navigator, compressor and verifier stages' own
handlers, declared by their own routes, over in-memory ports.

The services run the same handlers on Kafka and MongoDB; here an `InMemoryBus` hands each
published event to the next stage and an `InMemoryQueryStore` keeps the result, so `treerag
ask` and the bus answer a question through the same code by construction. With a model client
the engine scores nodes (when `QuerySettings.llm_scoring`) and writes answers with it; with an
`AnswerCache` a question asked before over the same document versions and settings is answered
from the cache without navigating.
"""

from __future__ import annotations

import logging
import time
import uuid

import numpy as np

from services.compressor.handlers import STAGE as COMPRESSOR
from services.compressor.handlers import CompressorHandlers
from services.compressor.main import routes as compressor_routes
from services.navigator.handlers import STAGE as NAVIGATOR
from services.navigator.handlers import NavigatorHandlers
from services.navigator.index import DocumentIndex
from services.navigator.index_cache import IndexCache, NoDocumentsError
from services.navigator.main import routes as navigator_routes
from services.verifier.handlers import STAGE as VERIFIER
from services.verifier.handlers import VerifierHandlers
from services.verifier.main import routes as verifier_routes
from shared.adapters.cache import AnswerCache
from shared.adapters.llm.client import LLMClient
from shared.adapters.logs import correlated, log_fields
from shared.adapters.memory.bus import InMemoryBus
from shared.adapters.memory.queries import InMemoryQueryStore
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.nli import answer_key_suffix, configured_judge
from shared.app.answer_key import answering_name
from shared.model.documents import DocumentRecord
from shared.model.events import AnswerVerified, QueryFailed, QueryReceived
from shared.model.query import QUESTION_MAX_CHARS, QuerySettings
from shared.ports.model_roles import AnswerGenerator, Embedder, NodeScorer
from shared.ports.repository import Repository
from shared.settings import get_settings
from treerag.pipeline import AskResult, StageTimings

logger = logging.getLogger(__name__)


class QueryFailedError(RuntimeError):
    """A stage reported the query as failed (the reason says why)."""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


class QueryEngine:
    """Answers questions over the documents of a repository, caching one index per tree version.

    `llm`: a model client; answers are then written by it, and nodes scored by it for queries
    whose settings ask for `llm_scoring`. `answer_cache`: answers are looked up before
    navigating and stored after verifying (off by default, so every call computes).
    `embedder`: the model the documents' vectors were made with (see `IndexCache`).
    """

    def __init__(
        self,
        repository: Repository,
        *,
        llm: LLMClient | None = None,
        answer_cache: AnswerCache | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.repository = repository
        self.answer_cache = answer_cache
        self.index_cache = IndexCache(repository, embedder)
        self._scorer: NodeScorer | None = None
        self._generator: AnswerGenerator | None = None
        if llm is not None:
            # Imported here: the offline engine never loads the model adapters.
            from services.navigator.llm_scoring import LLMNodeScorer
            from services.verifier.llm_answer import LLMAnswerGenerator

            self._scorer = LLMNodeScorer(llm)
            self._generator = LLMAnswerGenerator(llm)

    async def records(self, doc_ids: list[str] | None) -> list[DocumentRecord]:
        return await self.index_cache.records(doc_ids)

    async def indexes(self, doc_ids: list[str] | None) -> list[DocumentIndex]:
        return await self.index_cache.indexes(doc_ids)

    def question_vector(self, question: str) -> np.ndarray | None:
        return self.index_cache.question_vector(question)

    def _pipeline(
        self, scorer: NodeScorer | None, generator: AnswerGenerator | None, use_cache: bool
    ) -> tuple[InMemoryBus, InMemoryQueryStore]:
        """A bus with the three query stages attached, as their `main.py` declares them."""
        bus, queries = InMemoryBus(), InMemoryQueryStore()
        cache = self.answer_cache if use_cache else None
        nli = get_settings().nli
        judge = configured_judge(nli)
        answered_by = answering_name(generator, scorer) + answer_key_suffix(nli)
        navigator = NavigatorHandlers(self.index_cache, bus, queries, scorer=scorer, cache=cache,
                                      answered_by=answered_by)
        compressor = CompressorHandlers(bus, queries)
        verifier = VerifierHandlers(self.repository, bus, queries, generator=generator, cache=cache,
                                    judge=judge, word_vectors=word_vectors(get_settings()))
        bus.attach(NAVIGATOR, navigator_routes(navigator))
        bus.attach(COMPRESSOR, compressor_routes(compressor))
        bus.attach(VERIFIER, verifier_routes(verifier))
        return bus, queries

    async def ask(
        self,
        question: str,
        doc_ids: list[str] | None,
        settings: QuerySettings,
        scorer: NodeScorer | None = None,
        generator: AnswerGenerator | None = None,
        *,
        use_cache: bool = True,
    ) -> AskResult:
        """The verified answer. `scorer`/`generator` override the engine's model-backed ones;
        `use_cache=False` skips the answer cache for this call (neither read nor written)."""
        if not question.strip():
            raise ValueError("the question is empty")
        if len(question) > QUESTION_MAX_CHARS:
            raise ValueError(f"the question is {len(question):,} characters long; at most {QUESTION_MAX_CHARS:,} "
                             "are accepted: ask about one thing at a time")
        generator = generator or self._generator
        if scorer is None and settings.llm_scoring:
            scorer = self._scorer
        started, loaded_before = time.perf_counter(), self.index_cache.load_seconds
        with correlated(query=question[:80]):
            bus, _ = self._pipeline(scorer, generator, use_cache)
            # The navigator finds the documents (ids, id prefixes or file names), as it does for
            # the gateway's queries; none found ends the query with NoDocumentsError.
            received = QueryReceived(query_id=uuid.uuid4().hex, question=question, doc_ids=doc_ids or [],
                                     settings=settings)
            await bus.publish(received)
            await bus.drain()
            load_ms = round((self.index_cache.load_seconds - loaded_before) * 1000, 3)
            result = self._result(bus, received.query_id, load_ms, _ms(started))
            logger.info(
                "answered",
                extra=log_fields(mode=result.mode, abstained=result.answer.abstained, generator=result.generator,
                                 confidence=result.answer.confidence, total_ms=result.timings.total_ms,
                                 cached=result.cached),
            )
        return result

    @staticmethod
    def _result(bus: InMemoryBus, query_id: str, load_ms: float, total_ms: float) -> AskResult:
        ends = [e for e in bus.published if isinstance(e, (AnswerVerified, QueryFailed)) and e.query_id == query_id]
        if not ends:
            raise QueryFailedError("the query ended without an answer or a failure; see the log")
        end = ends[-1]
        if isinstance(end, QueryFailed):
            if end.error_type == NoDocumentsError.__name__:
                raise NoDocumentsError(end.reason)
            raise QueryFailedError(f"the {end.stage} stage failed: {end.reason}")
        spent = {t.stage: t.processing_ms for t in end.timings}
        outcome = end.outcome
        return AskResult(
            answer=outcome.answer,
            stats=outcome.stats,
            mode=outcome.mode,
            mode_reason=outcome.mode_reason,
            tokens_before=outcome.tokens_before,
            tokens_after=outcome.tokens_after,
            timings=StageTimings(load_ms=load_ms, navigate_ms=spent.get(NAVIGATOR, 0.0),
                                 compress_ms=spent.get(COMPRESSOR, 0.0), verify_ms=spent.get(VERIFIER, 0.0),
                                 total_ms=total_ms),
            documents=[doc_id for doc_id, _ in end.documents],
            warnings=outcome.warnings,
            path=outcome.path,
            generator=outcome.answer.generator,
            cached=end.producer == NAVIGATOR,
        )
