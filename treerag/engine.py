"""The query pipeline in one process: the navigator, compressor and verifier stages' own
handlers, declared by their own routes, over in-memory ports.

The services run the same handlers on Kafka and MongoDB; here `treerag.query_path.QueryPath`
hands each published event to the next stage over an in-memory bus, so `treerag ask`, the
evaluation harness and the bus answer a question through the same code by construction. With a model client
the engine scores nodes (when `QuerySettings.llm_scoring`) and writes answers with it; with an
`AnswerCache` a question asked before over the same document versions and settings is answered
from the cache without navigating.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from services.navigator.index import DocumentIndex
from services.navigator.index_cache import IndexCache
from shared.adapters.cache import AnswerCache
from shared.adapters.llm.client import LLMClient
from shared.adapters.logs import correlated, log_fields
from shared.adapters.nli import answer_key_suffix
from shared.app.answer_key import answering_name
from shared.model.documents import DocumentRecord
from shared.model.query import QUESTION_MAX_CHARS, QuerySettings
from shared.ports.model_roles import AnswerGenerator, Embedder, NodeScorer
from shared.ports.repository import Repository
from shared.settings import get_settings
from treerag.pipeline import AskResult, QueryFailedError, ask_result
from treerag.query_path import QueryModels, QueryPath

__all__ = ["QueryEngine", "QueryFailedError", "ask_result"]

logger = logging.getLogger(__name__)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


class QueryEngine:
    """Answers questions over the documents of a repository, caching one index per tree version.

    `llm`: a model client; answers are then written by it, and nodes scored by it for queries
    whose settings ask for `llm_scoring`. `answer_cache`: answers are looked up before
    navigating and stored after verifying (off by default, so every call computes).
    `embedder`: the model the documents' vectors were made with (see `IndexCache`).
    `pages_on_use`: a document's page texts are read when a query first needs them (as the
    navigator service reads them); off for callers that use `indexes()` outside the event loop.
    """

    def __init__(
        self,
        repository: Repository,
        *,
        llm: LLMClient | None = None,
        answer_cache: AnswerCache | None = None,
        embedder: Embedder | None = None,
        models: QueryModels | None = None,
        pages_on_use: bool = True,
    ) -> None:
        self.repository = repository
        self.models = models or QueryModels.configured(get_settings())
        self.answer_cache = answer_cache
        self.index_cache = IndexCache(repository, embedder, pages_on_use=pages_on_use)
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

    def _path(self, scorer: NodeScorer | None, generator: AnswerGenerator | None, use_cache: bool) -> QueryPath:
        """The three query stages, as their `main.py` declares them, over this engine's store."""
        answered_by = answering_name(generator, scorer) + answer_key_suffix(get_settings().nli)
        return QueryPath(self.index_cache, self.repository, self.models, scorer=scorer, generator=generator,
                         cache=self.answer_cache if use_cache else None, answered_by=answered_by)

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
            # The navigator finds the documents (ids, id prefixes or file names), as it does for
            # the gateway's queries; none found ends the query with NoDocumentsError.
            run = await self._path(scorer, generator, use_cache).ask(question, doc_ids, settings)
            load_ms = round((self.index_cache.load_seconds - loaded_before) * 1000, 3)
            result = ask_result(run, load_ms, _ms(started))
            logger.info(
                "answered",
                extra=log_fields(mode=result.mode, abstained=result.answer.abstained, generator=result.generator,
                                 confidence=result.answer.confidence, total_ms=result.timings.total_ms,
                                 cached=result.cached),
            )
        return result
