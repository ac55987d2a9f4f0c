"""Navigate -> compress -> verify over in-memory document indexes, as one function call.

The question goes through the three stages' own handlers (`treerag.query_path`), as it does on
the bus and in `treerag.engine.QueryEngine`. `AskResult` is what a one-process ask returns.
"""

from __future__ import annotations

import asyncio
import logging
import time

from pydantic import BaseModel, Field

from services.compressor.handlers import STAGE as COMPRESSOR
from services.navigator.handlers import STAGE as NAVIGATOR
from services.navigator.index import DocumentIndex
from services.navigator.index_cache import NoDocumentsError
from services.verifier.handlers import STAGE as VERIFIER
from shared.app.answer_key import EXTRACTIVE
from shared.model.events import QueryFailed
from shared.model.query import (
    QuerySettings,
    TraversalStats,
    VerifiedAnswer,
    VisitedSection,
)
from shared.ports.model_roles import AnswerGenerator, NodeScorer
from shared.settings import get_settings
from treerag.query_path import HeldIndexes, PathRun, QueryModels, QueryPath

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


class QueryFailedError(RuntimeError):
    """A stage reported the query as failed (the reason says why)."""


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def answer_from_indexes(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    generator: AnswerGenerator | None = None,
    models: QueryModels | None = None,
) -> AskResult:
    """Navigate, compress and answer over in-memory document indexes, through the stages' own
    handlers (`treerag.query_path`) with `models` (the configured ones by default)."""
    started = time.perf_counter()
    held = HeldIndexes(indexes)
    path = QueryPath(held, held, models or QueryModels.configured(get_settings()), scorer=scorer,
                     generator=generator)
    run = asyncio.run(path.ask(question, None, settings))
    return ask_result(run, total_ms=_ms(started))


def ask_result(run: PathRun, load_ms: float = 0.0, total_ms: float = 0.0) -> AskResult:
    """What `treerag ask` shows of a question's run; a failed query raises with its reason."""
    end = run.end
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
