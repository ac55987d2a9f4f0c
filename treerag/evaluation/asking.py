"""The harness's questions, asked through the product's one query path (`treerag.query_path`).

Every system's answer comes from the verifier stage's handler with the configured checking
models: the tree systems go through all three stages with the fold's ranking models; the BM25
baselines hand their passages to the verifier. One event loop serves every question of a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from services.navigator.index import DocumentIndex
from services.navigator.models import NavigatorModels
from shared.model.query import CompressedContext, NavigationResult, QuerySettings, TraversalStats, VerifiedAnswer
from shared.settings import get_settings
from treerag.query_path import HeldIndexes, PathRun, QueryModels, QueryPath

T = TypeVar("T")

BASELINE_REASON = "a baseline's pages: no tree walked"


class Asker:
    """Asks questions of document indexes held in memory, as `treerag ask` would of a store
    holding exactly those documents."""

    def __init__(self, models: QueryModels | None = None) -> None:
        self.models = models or QueryModels.configured(get_settings())
        self._loop = asyncio.new_event_loop()

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(work)

    def ask(
        self, question: str, indexes: list[DocumentIndex], settings: QuerySettings,
        navigator: NavigatorModels | None = None,
    ) -> PathRun:
        """Navigate, compress and verify; `navigator`: a fold's ranking models instead of the
        configured ones."""
        held = HeldIndexes(indexes)
        models = self.models if navigator is None else self.models.with_ranking(navigator)
        return self._run(QueryPath(held, held, models).ask(question, None, settings))

    def verify(self, context: CompressedContext, indexes: list[DocumentIndex], settings: QuerySettings) -> VerifiedAnswer:
        """The verifier's answer to passages a baseline found, checked against the full pages."""
        held = HeldIndexes(indexes)
        navigation = NavigationResult(question=context.question, mode="flat", mode_reason=BASELINE_REASON,
                                      passages=list(context.passages), stats=TraversalStats())
        documents = [(ix.doc_id, ix.record.version) for ix in indexes]
        return self._run(QueryPath(held, held, self.models).verify(context, settings, navigation, documents))

    def close(self) -> None:
        self._loop.close()
