"""The query pipeline in one process: navigate -> compress -> verify, over a repository.

The bus services run the same three domain functions; `answer_from_indexes` is the single
composition both this engine and the evaluation harness use, so they answer identically.
"""

from __future__ import annotations

import logging
import time

from pydantic import BaseModel, Field

from services.compressor.compress import compress
from services.navigator.index import DocumentIndex
from services.navigator.navigate import navigate
from services.verifier.answer import answer_question
from shared.documents import DocumentRecord, DocumentStatus
from shared.logs import correlated, log_fields
from shared.ports import AnswerGenerator, NodeScorer
from shared.query import NavigationResult, QuerySettings, TraversalStats, VerifiedAnswer
from shared.store.base import Repository

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
    )


class QueryEngine:
    """Answers questions over the documents of a repository, caching one index per tree version."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self._indexes: dict[tuple[str, int], DocumentIndex] = {}

    async def _index(self, record: DocumentRecord) -> DocumentIndex:
        key = (record.doc_id, record.version)
        cached = self._indexes.get(key)
        if cached is not None:
            return cached
        tree = await self.repository.get_tree(record.doc_id)
        if tree is None:
            raise NoDocumentsError(f"document {record.doc_id} ({record.file_name}) has no tree; re-index it")
        pages = await self.repository.get_pages(record.doc_id)
        index = DocumentIndex.build(record, tree, pages)
        # Older versions of the same document are stale once a newer tree is indexed.
        for stale in [k for k in self._indexes if k[0] == record.doc_id]:
            del self._indexes[stale]
        self._indexes[key] = index
        return index

    async def records(self, doc_ids: list[str] | None) -> list[DocumentRecord]:
        if doc_ids:
            records = []
            for key in doc_ids:
                record = await self.repository.find_document(key)
                if record is None:
                    raise NoDocumentsError(
                        f"no document matches {key!r}; use a doc id, a unique id prefix or a file name "
                        "(`treerag tree` lists them)"
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
    ) -> AskResult:
        if not question.strip():
            raise ValueError("the question is empty")
        started = time.perf_counter()
        with correlated(query=question[:80]):
            indexes = await self.indexes(doc_ids)
            load_ms = _ms(started)
            result = answer_from_indexes(question, indexes, settings, scorer, generator)
            result.timings.load_ms = load_ms
            result.timings.total_ms = _ms(started)
            logger.info(
                "answered",
                extra=log_fields(mode=result.mode, abstained=result.answer.abstained,
                                 confidence=result.answer.confidence, total_ms=result.timings.total_ms),
            )
        return result

