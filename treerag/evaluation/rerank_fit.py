"""Fit the reranking weight (`services/navigator/ranking/rerank.py`) from labelled questions.

For every answerable example, the fitted ranking model orders the candidates and the
cross-encoder scores the best `depth` pages once; the weight is the entry of `WEIGHT_GRID`
whose reordering puts a gold page first for the most examples (a tie keeps the smaller weight,
the one closer to the fused order). Hit@1 is the figure the weight exists to move, and one
number needs no smoother objective.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from services.navigator.ranking.fused import rank
from services.navigator.ranking.model import RankingModel
from services.navigator.ranking.rerank import DEPTH, WINDOW_WORDS, RerankModel, relevance
from shared.ports.model_roles import PassageScorer
from treerag.evaluation.fitting import Example

# Spans "the fused order decides" (0) to "the cross-encoder decides" (a relevance gap of 0.1
# outweighs fused odds of e^5 at 50); fixed before fitting.
WEIGHT_GRID = (0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0)


def fit_rerank(
    examples: Sequence[Example], model: RankingModel, scorer: PassageScorer,
    note: dict[str, str | int | float] | None = None, grid: Sequence[float] = WEIGHT_GRID,
) -> RerankModel:
    """The weight of `grid` with the most gold pages first over the answerable `examples`."""
    judged = []
    for example in examples:
        found = example.exploration
        if not example.answerable or found.candidates is None:
            continue
        ranking = rank(found.candidates, model, found.absent_terms, found.unmentioned_names)
        if not ranking.pages:
            continue
        names = [d.index.label for d in found.candidates.documents]  # as gold pages name them
        gold = np.array([(names[p.document], p.page) in example.gold for p in ranking.pages[:DEPTH]])
        if not gold.any():
            continue  # no weight can put a gold page first
        fused, relevant = relevance(ranking, found.candidates, scorer, DEPTH, WINDOW_WORDS)
        judged.append((fused, relevant, gold))
    if not judged:
        raise ValueError("the reranking weight needs answerable examples with a gold page among the best pages")

    def hits(weight: float) -> int:
        return sum(bool(gold[int(np.argmax(fused + weight * relevant))]) for fused, relevant, gold in judged)

    scores = {weight: hits(weight) for weight in grid}
    best = max(grid, key=lambda weight: (scores[weight], -weight))
    fitted_on: dict[str, str | int | float] = {"examples": len(judged), "ranking_model": model.digest()}
    fitted_on |= {f"hit1_weight_{weight:g}": round(scores[weight] / len(judged), 4) for weight in grid}
    return RerankModel(scorer=scorer.name, weight=best, fitted_on=fitted_on | (note or {}))
