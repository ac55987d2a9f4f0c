"""Fit the router: how several documents are told apart, and how much that counts in a page's
score (`services/navigator/route_features.py`).

1. *routing weights*: pairwise logistic regression over the routing features, the question's
   own document against every other document it was asked of (no intercept; a weight fitted
   negative is set to zero, so a feature only ever adds to a document's claim);
2. *prior weight*: the entry of `PRIOR_GRID` whose page ranking, with the fitted ranker and
   routing weights, puts a gold page first for the most labelled training questions asked of
   all their training documents at once; of those, the one whose top page is in the
   question's own document for the most (ties: the smaller weight).

The routing weights learn from the questions the documents ask of themselves too
(`self_pairs`); the prior weight only from labelled ones, which say how a real question's
words meet a page.

Deterministic: lbfgs from zeros, explorations without randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from services.navigator.index import DocumentIndex
from services.navigator.navigate import Exploration, explore
from services.navigator.ranking.fused import rank
from services.navigator.ranking.model import RankingModel, RouterModel
from services.navigator.route import document_features
from services.navigator.route_features import ROUTING_FEATURES
from shared.model.query import QuerySettings
from treerag.evaluation.embedding import harness_embedder

# Weights of log P(document | question) in a page's score, tried in order (0: routing only
# shortlists documents).
PRIOR_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
REGULARISATION = 1.0
# Every feature computed, to fit on.
ALL_FEATURES = RouterModel(features=list(ROUTING_FEATURES), coef=[1.0] * len(ROUTING_FEATURES), prior_weight=0.0)


@dataclass(frozen=True)
class CorpusQuestion:
    """An answerable question asked of several documents, one of them its own."""

    item_id: str
    question: str
    doc: str  # the question's own document (file name)
    gold: frozenset[tuple[str, int]]  # (file name, 1-based page)
    indexes: tuple[DocumentIndex, ...]
    self_made: bool = False  # written from a page of its document (`self_pairs`), not labelled


def routing_weights(questions: Sequence[CorpusQuestion], dense: bool = True) -> list[float]:
    """Pairwise logistic weights of ROUTING_FEATURES (`dense` False: the dense feature left out)."""
    differences = []
    embedder = harness_embedder()
    for q in questions:
        labels = [ix.label for ix in q.indexes]
        if q.doc not in labels or len(labels) < 2:
            continue
        matrix = document_features(q.question, list(q.indexes), ALL_FEATURES, embedder)
        if not dense:
            matrix[:, ROUTING_FEATURES.index("dense")] = 0.0
        own = labels.index(q.doc)
        differences.append(matrix[own] - np.delete(matrix, own, axis=0))
    if not differences:
        raise ValueError("no question was asked of its own document and another; give the router several documents")
    x = np.vstack(differences)
    x = np.vstack([x, -x])
    y = np.concatenate([np.ones(len(x) // 2), np.zeros(len(x) // 2)])
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    with threadpool_limits(1):
        classifier = LogisticRegression(C=REGULARISATION, fit_intercept=False, max_iter=5000).fit(x / scale, y)
    return [round(max(0.0, float(c)), 6) for c in classifier.coef_[0] / scale]


def _top_hits(question: CorpusQuestion, found: Exploration, model: RankingModel) -> tuple[bool, bool]:
    """Whether the top page is a gold page, and whether it is in the question's document."""
    if found.candidates is None or not found.candidates.keys:
        return False, False
    ranking = rank(found.candidates, model, found.missing)
    top = ranking.pages[0]
    label = found.candidates.documents[top.document].index.label
    return (label, top.page) in question.gold, label == question.doc


def fit_router(
    questions: Sequence[CorpusQuestion], model: RankingModel, settings: QuerySettings, lexical: bool = False,
) -> RouterModel:
    """Routing weights, then the prior weight, for `model`'s ranker. `lexical`: the model sees
    the dense page features at zero (embeddings off), and the dense routing feature is left out."""
    router = RouterModel(features=list(ROUTING_FEATURES), coef=routing_weights(questions, not lexical),
                         prior_weight=0.0)
    auto = settings.model_copy(update={"mode": "auto"})
    explored = []
    embedder = harness_embedder()
    for q in [q for q in questions if not q.self_made]:
        found = explore(q.question, list(q.indexes), auto, router=router, embedder=embedder)
        if lexical and found.candidates is not None:
            found = replace(found, candidates=found.candidates.without_dense())
        explored.append((q, found))
    hits: dict[float, tuple[int, int]] = {}
    for weight in PRIOR_GRID:
        weighted = model.model_copy(update={"router": router.model_copy(update={"prior_weight": weight})})
        tops = [_top_hits(q, found, weighted) for q, found in explored]
        hits[weight] = (sum(page for page, _ in tops), sum(document for _, document in tops))
    best = max(PRIOR_GRID, key=lambda w: (hits[w], -PRIOR_GRID.index(w)))
    return router.model_copy(update={"prior_weight": best})
