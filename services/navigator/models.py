"""The models that rank a navigator's pages, loaded once by whoever composes the stage.

The stage's bootstrap, the one-process engine and the evaluation harness hand the same bundle
to `NavigatorHandlers`: the shipped ranking model and the configured reranker by default, a
fold's refitted ones under cross-validation.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.navigator.ranking.model import RankingModel, shipped_model
from services.navigator.ranking.rerank import Reranking, configured_reranking, reranking_identity


@dataclass(frozen=True)
class NavigatorModels:
    ranking: RankingModel
    reranking: Reranking | None = None

    def identity(self) -> str:
        """What the answer-cache key names of these models: a refitted model or another
        reranker can cite other pages, so their answers are cached apart."""
        return self.ranking.digest() + (reranking_identity(self.reranking) if self.reranking else "")


def configured_models() -> NavigatorModels:
    """The shipped ranking model and the reranker `TREERAG_RERANKER` names (None when off)."""
    return NavigatorModels(ranking=shipped_model(), reranking=configured_reranking())
