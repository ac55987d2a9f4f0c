"""The query pipeline in one process: navigate -> compress -> verify, over a repository.

The bus services run the same three domain functions; `answer_from_indexes` is the single
composition both this engine and the evaluation harness use, so they answer identically.
With a model client the engine scores nodes (when `QuerySettings.llm_scoring`) and writes
answers with it; with an `AnswerCache` a question asked before over the same document versions
and settings is answered from the cache without navigating.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field

from services.compressor.compress import compress
from services.navigator.index import DocumentIndex
from services.navigator.navigate import navigate
from services.verifier.answer import answer_question
from services.verifier.cache_key import EXTRACTIVE, query_answer_key
from shared.cache import AnswerCache
from shared.documents import DocumentRecord, DocumentStatus
from shared.logs import correlated, log_fields
from shared.ports import AnswerGenerator, Embedder, NodeScorer
from shared.query import NavigationResult, QuerySettings, TraversalStats, VerifiedAnswer
from shared.store.base import Repository

if TYPE_CHECKING:
    from shared.llm.client import LLMClient

logger = logging.getLogger(__name__)


class StageTimings(BaseModel):
    load_ms: float = 0.0
    navigate_ms: float = 0.0
    compress_ms: float = 0.0
    verify_ms: float = 0.0
    total_ms: float = 0.0


class AskResult(BaseModel):
    answer: VerifiedAnswer
    stats: TraversalStats
    mode: str = Field(description="Navigation strategy used (dfs/beam).")
    mode_reason: str
    tokens_before: int
    tokens_after: int
    timings: StageTimings
    documents: list[str] = Field(default_factory=list, description="Doc ids the question was asked over.")
    warnings: list[str] = Field(default_factory=list, description="Navigation and answer warnings.")
    generator: str = Field(default=EXTRACTIVE, description="What wrote the answer: 'extractive' or 'llm:<model>'.")
    cached: bool = Field(default=False, description="True when the answer came from the answer cache.")


class NoDocumentsError(LookupError):
    """Raised when there is nothing to ask over."""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def answer_from_indexes(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    generator: AnswerGenerator | None = None,
) -> AskResult:
    """Navigate, compress and answer over in-memory document indexes."""
    by_id = {ix.doc_id: ix for ix in indexes}

    def page_text(doc_id: str, page: int) -> str | None:
        index = by_id.get(doc_id)
        return index.page_text(page) if index else None

    started = time.perf_counter()
    navigation: NavigationResult = navigate(question, indexes, settings, scorer)
    navigate_ms = _ms(started)
    mark = time.perf_counter()
    context = compress(question, navigation.passages, settings)
    compress_ms = _ms(mark)
    mark = time.perf_counter()
    answer = answer_question(context, settings, navigation.mode, generator, page_text)
    verify_ms = _ms(mark)
    return AskResult(
        answer=answer,
        stats=navigation.stats,
        mode=navigation.mode,
        mode_reason=navigation.mode_reason,
        tokens_before=context.tokens_before,
        tokens_after=context.tokens_after,
        timings=StageTimings(navigate_ms=navigate_ms, compress_ms=compress_ms, verify_ms=verify_ms,
                             total_ms=_ms(started)),
        documents=[ix.doc_id for ix in indexes],
        warnings=navigation.warnings + answer.warnings,
        generator=answer.generator,
    )


class QueryEngine:
    """Answers questions over the documents of a repository, caching one index per tree version.

    `llm`: a model client; answers are then written by it, and nodes scored by it for queries
    whose settings ask for `llm_scoring`. `answer_cache`: answers are looked up before
    navigating and stored after verifying (off by default, so every call computes).
    `embedder`: the model the documents' vectors were computed with; each index then carries
    them (`DocumentIndex.dense`) and `question_vector` embeds questions for them.
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
        self.embedder = embedder
        self.llm = llm
        self.answer_cache = answer_cache
        self._indexes: dict[tuple[str, int], DocumentIndex] = {}
        self._scorer: NodeScorer | None = None
        self._generator: AnswerGenerator | None = None
        if llm is not None:
            # Imported here: the offline engine never loads the model adapters.
            from services.navigator.llm_scoring import LLMNodeScorer
            from services.verifier.llm_answer import LLMAnswerGenerator

            self._scorer = LLMNodeScorer(llm)
            self._generator = LLMAnswerGenerator(llm)

    async def _index(self, record: DocumentRecord) -> DocumentIndex:
        key = (record.doc_id, record.version)
        cached = self._indexes.get(key)
        if cached is not None:
            return cached
        tree = await self.repository.get_tree(record.doc_id)
        if tree is None:
            raise NoDocumentsError(f"document {record.doc_id} ({record.file_name}) has no tree; re-index it")
        pages = await self.repository.get_pages(record.doc_id)
        embeddings = await self.repository.get_embeddings(record.doc_id) if self.embedder is not None else None
        if embeddings is not None and self.embedder is not None and embeddings.model != self.embedder.name:
            logger.warning(
                "stored vectors come from another model; ignored (re-index to use them)",
                extra=log_fields(doc_id=record.doc_id, stored=embeddings.model, configured=self.embedder.name),
            )
            embeddings = None
        index = DocumentIndex.build(record, tree, pages, embeddings=embeddings)
        # Older versions of the same document are stale once a newer tree is indexed.
        for stale in [k for k in self._indexes if k[0] == record.doc_id]:
            del self._indexes[stale]
        self._indexes[key] = index
        return index

    def question_vector(self, question: str) -> np.ndarray | None:
        """The question's unit vector for `DocumentIndex.dense_*_scores`; None without an embedder."""
        return self.embedder.embed([question])[0] if self.embedder is not None else None

    async def records(self, doc_ids: list[str] | None) -> list[DocumentRecord]:
        if doc_ids:
            records = []
            for key in doc_ids:
                record = await self.repository.find_document(key)
                if record is None:
                    raise NoDocumentsError(
                        f"no document matches {key!r}; use a doc id, a unique id prefix or a file name "
                        "(`treerag tree` with no argument lists them)"
                    )
                records.append(record)
        else:
            records = await self.repository.list_documents()
        ready = [r for r in records if r.status == DocumentStatus.READY]
        if not ready:
            raise NoDocumentsError("no indexed document to ask over; run `treerag index FILE.pdf` first")
        return sorted(ready, key=lambda r: r.doc_id)

    async def indexes(self, doc_ids: list[str] | None) -> list[DocumentIndex]:
        return [await self._index(record) for record in await self.records(doc_ids)]

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
        generator = generator or self._generator
        if scorer is None and settings.llm_scoring:
            scorer = self._scorer
        started = time.perf_counter()
        with correlated(query=question[:80]):
            indexes = await self.indexes(doc_ids)
            load_ms = _ms(started)
            cache = self.answer_cache if use_cache else None
            key = self._cache_key(question, indexes, settings, scorer, generator) if cache else None
            if cache is not None and key is not None:
                hit = await cache.get(key)
                if hit is not None:
                    result = _from_cache(hit, indexes, load_ms, _ms(started))
                    if result is not None:
                        logger.info("answered from the cache", extra=log_fields(generator=result.generator))
                        return result
            if scorer is None and generator is None:
                result = answer_from_indexes(question, indexes, settings)
            else:
                # Model calls block for seconds: a worker thread keeps the event loop serving.
                result = await asyncio.to_thread(answer_from_indexes, question, indexes, settings, scorer, generator)
            result.timings.load_ms = load_ms
            result.timings.total_ms = _ms(started)
            if cache is not None and key is not None and not result.stats.scorer_fallbacks:
                # An answer navigated with lexical fallbacks (the model failed) is not kept:
                # the next ask should get the model's ranking.
                await cache.put(key, result.model_dump(mode="json"))
            logger.info(
                "answered",
                extra=log_fields(mode=result.mode, abstained=result.answer.abstained, generator=result.generator,
                                 confidence=result.answer.confidence, total_ms=result.timings.total_ms),
            )
        return result

    @staticmethod
    def _cache_key(
        question: str,
        indexes: list[DocumentIndex],
        settings: QuerySettings,
        scorer: NodeScorer | None,
        generator: AnswerGenerator | None,
    ) -> str:
        """The services' key (same question, versions, settings and model give the same key),
        extended with the scorer when it is not the answering model."""
        documents = [(ix.doc_id, ix.record.version) for ix in indexes]
        name = generator.name if generator is not None else EXTRACTIVE
        scorer_name = getattr(scorer, "name", type(scorer).__name__) if scorer is not None else None
        if scorer_name is not None and scorer_name != name:
            name = f"{name}|scoring:{scorer_name}"
        return query_answer_key(question, documents, settings, name)


def _from_cache(value: dict, indexes: list[DocumentIndex], load_ms: float, total_ms: float) -> AskResult | None:
    """A stored answer as this query's result; None when the entry cannot be read (then the
    question is answered afresh). Entries written by the services lack timings and documents."""
    payload = {**value, "timings": StageTimings(load_ms=load_ms, total_ms=total_ms).model_dump(),
               "cached": True}
    payload.setdefault("documents", [ix.doc_id for ix in indexes])
    payload.setdefault("generator", (value.get("answer") or {}).get("generator", EXTRACTIVE))
    try:
        return AskResult.model_validate(payload)
    except ValueError:
        logger.warning("unreadable answer cache entry ignored")
        return None
