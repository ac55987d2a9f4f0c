"""The models a navigator ranks pages with, loaded once by whoever composes the stage.

The stage's bootstrap, the one-process engine and the evaluation harness build the bundle here
from the settings and hand it to `NavigatorHandlers`; nothing else in the stage reads a setting
or loads a model. The bundle: the embedder (`TREERAG_EMBEDDINGS`; none when embeddings are off),
the shipped ranking model fitted with that embedder (the lexical one without),
and the reranker `TREERAG_RERANKER` names with its fitted weight. Under cross-validation a
fold's refitted ranking model and reranker replace the shipped ones.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

from services.navigator.ranking.model import RankingModel, model_for
from services.navigator.ranking.rerank import Reranking, load_rerank_model, reranking_identity
from shared.adapters.embeddings import make_embedder
from shared.adapters.logs import log_fields
from shared.adapters.reranker import configured_scorer
from shared.ports.model_roles import Embedder
from shared.settings import Settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class NavigatorModels:
    ranking: RankingModel
    reranking: Reranking | None = None
    # What the dense features compare the question with the pages by (None: ranked lexically).
    embedder: Embedder | None = None

    def identity(self) -> str:
        """What the answer-cache key names of these models: a refitted model or another
        reranker can cite other pages, so their answers are cached apart."""
        return self.ranking.digest() + (reranking_identity(self.reranking) if self.reranking else "")


def configured_models(settings: Settings) -> NavigatorModels:
    """The embedder `settings` name (None when embeddings are off), the shipped ranking model
    fitted with it, and their reranker. Raises `EmbeddingsConfigError`, saying what to install
    or set, when the embedder cannot load: a stage does not start ranking otherwise than it was
    configured to."""
    embedder = make_embedder(settings)
    return NavigatorModels(ranking=model_for(embedder.name if embedder is not None else None),
                           reranking=configured_reranking(settings.reranker), embedder=embedder)


@lru_cache(maxsize=4)
def configured_reranking(setting: str) -> Reranking | None:
    """The reranker `setting` (`TREERAG_RERANKER`) names with its fitted weight; None when off,
    or when the shipped weight was fitted for another model (logged once)."""
    scorer = configured_scorer(setting)
    if scorer is None:
        return None
    model = load_rerank_model()
    if model.scorer != scorer.name:
        logger.warning(
            "reranker not used: no weight fitted for it",
            extra=log_fields(reranker=scorer.name, fitted_for=model.scorer,
                             fix="fetch the reranker with scripts/models/reranker.sh, or refit with make fit-reranker"),
        )
        return None
    return Reranking(scorer, model)
