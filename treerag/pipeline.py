"""Navigate -> compress -> verify over in-memory document indexes, as one function call.

The evaluation harness asks hundreds of questions of indexes it holds in memory: it calls the
three stages' domain functions directly, the same functions their handlers call on the bus
and in `treerag.engine.QueryEngine`. `AskResult` is what a one-process ask returns.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from services.compressor.compress import compress
from services.navigator.index import DocumentIndex
from services.navigator.navigate import navigate
from services.navigator.ranking.model import RankingModel
from services.verifier.answer import answer_question
from shared.app.answer_key import EXTRACTIVE
from shared.model.query import (
    NavigationResult,
    QuerySettings,
    TraversalStats,
    VerifiedAnswer,
    VisitedSection,
)
from shared.ports.model_roles import AnswerGenerator, NodeScorer

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)


class StageTimings(BaseModel):
    """Milliseconds of one query. `load_ms`: reading documents from the store and building
    their indexes (0 when they were warm); the navigator does it, so it is part of `navigate_ms`."""

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
    path: list[VisitedSection] = Field(
        default_factory=list, description="The sections the navigator visited, in order, the selected ones marked."
    )
    generator: str = Field(default=EXTRACTIVE, description="What wrote the answer: 'extractive' or 'llm:<model>'.")
    cached: bool = Field(default=False, description="True when the answer came from the answer cache.")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def answer_from_indexes(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    generator: AnswerGenerator | None = None,
    model: RankingModel | None = None,
) -> AskResult:
    """Navigate, compress and answer over in-memory document indexes (`model`: the ranking
    model, the shipped one by default)."""
    by_id = {ix.doc_id: ix for ix in indexes}

    def page_text(doc_id: str, page: int) -> str | None:
        index = by_id.get(doc_id)
        return index.page_text(page) if index else None

    started = time.perf_counter()
    navigation: NavigationResult = navigate(question, indexes, settings, scorer, model)
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
        path=navigation.path,
        generator=answer.generator,
    )
