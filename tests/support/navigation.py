"""The navigator's functions with the models this process's settings name, as the stage's
bootstrap hands them in: the embedder, the shipped ranking model fitted with it and the
reranker `TREERAG_RERANKER` names. The settings are read at each call, so a test that sets an
environment variable gets the models it names."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from services.navigator import navigate as navigation
from services.navigator import route
from services.navigator.index import DocumentIndex
from services.navigator.models import NavigatorModels, configured_models, configured_reranking
from services.navigator.ranking.model import RankingModel, RouterModel
from services.navigator.ranking.rerank import Reranking
from shared.model.query import NavigationResult, QuerySettings
from shared.ports.model_roles import Embedder, NodeScorer
from shared.settings import Settings

_CONFIGURED: Any = object()  # a reranking not given: the configured one


def configured() -> NavigatorModels:
    return configured_models(Settings())


def shipped_model() -> RankingModel:
    return configured().ranking


def embedder() -> Embedder | None:
    return configured().embedder


def reranking() -> Reranking | None:
    return configured_reranking(Settings().reranker)


def navigate(question: str, indexes: list[DocumentIndex], settings: QuerySettings, scorer: NodeScorer | None = None,
             *, model: RankingModel | None = None, reranking: Reranking | None = _CONFIGURED) -> NavigationResult:
    """`navigate` with the configured models, `model` and `reranking` standing in when given."""
    models = configured()
    if model is not None:
        models = replace(models, ranking=model)
    if reranking is not _CONFIGURED:
        models = replace(models, reranking=reranking)
    return navigation.navigate(question, indexes, settings, scorer, models=models)


def explore(question: str, indexes: list[DocumentIndex], settings: QuerySettings, scorer: NodeScorer | None = None,
            router: RouterModel | None = None) -> navigation.Exploration:
    return navigation.explore(question, indexes, settings, scorer, router, embedder())


def document_features(question: str, indexes: list[DocumentIndex], router: RouterModel) -> np.ndarray:
    return route.document_features(question, indexes, router, embedder())
