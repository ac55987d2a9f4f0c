"""Fit the reranking model (`services/navigator/ranking/rerank.py`) from labelled questions.

1. *weight*: for every answerable example, the fitted ranking model orders the candidates and
   the cross-encoder scores the best `DEPTH` pages once; the weight is the entry of
   `WEIGHT_GRID` whose reordering puts a gold page first for the most examples (a tie keeps
   the smaller weight, the one closer to the fused order). Hit@1 is the figure the weight
   exists to move, and one number needs no smoother objective.
2. *answer decision*, given unanswerable examples too (off-topic pairs): a logistic regression
   over the fused ranking's log-odds that the documents answer, judged by a ranking and
   abstention model fitted without the example's document (as the ranking model's own
   abstention is fitted), and the cross-encoder's best logit; its threshold abstains on at most
   the ranking model's false-abstention budget of the answerable examples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from services.navigator.ranking.fused import rank
from services.navigator.ranking.model import LinearModel, RankingModel
from services.navigator.ranking.rerank import (
    DEPTH,
    RERANK_ABSTENTION_FEATURES,
    WINDOW_WORDS,
    RerankModel,
    abstention_row,
    relevance,
    sigmoid,
)
from shared.ports.model_roles import PassageScorer
from treerag.evaluation.fitting import (
    SHIPPED_RECIPE,
    Example,
    budget_threshold,
    fit_linear,
    model_spec,
    out_of_fold_probabilities,
    out_of_fold_rows,
)

# Spans "the fused order decides" (0) to "the cross-encoder decides" (a relevance gap of 0.1
# outweighs fused odds of e^5 at 50); fixed before fitting.
WEIGHT_GRID = (0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0)


def fit_rerank(
    examples: Sequence[Example], model: RankingModel, scorer: PassageScorer,
    note: dict[str, str | int | float] | None = None, grid: Sequence[float] = WEIGHT_GRID,
) -> RerankModel:
    """The weight of `grid` with the most gold pages first over the answerable `examples`, and,
    when `examples` hold unanswerable ones too, the answer decision with the cross-encoder."""
    usable = [e for e in examples if e.exploration.candidates is not None and e.exploration.candidates.keys]
    logits: list[np.ndarray] = []
    judged = []
    for example in usable:
        found = example.exploration
        candidates = found.candidates
        assert candidates is not None  # `usable` holds only explorations with candidates
        ranking = rank(candidates, model, found.missing)
        fused, scores = relevance(ranking, candidates, scorer, DEPTH, WINDOW_WORDS)
        logits.append(scores)
        if not example.answerable:
            continue
        names = [d.index.label for d in candidates.documents]  # as gold pages name them
        gold = np.array([(names[p.document], p.page) in example.gold for p in ranking.pages[:DEPTH]])
        if gold.any():  # else no weight can put a gold page first
            judged.append((fused, sigmoid(scores), gold))
    if not judged:
        raise ValueError("the reranking weight needs answerable examples with a gold page among the best pages")

    def hits(weight: float) -> int:
        return sum(bool(gold[int(np.argmax(fused + weight * relevant))]) for fused, relevant, gold in judged)

    scores_by_weight = {weight: hits(weight) for weight in grid}
    best = max(grid, key=lambda weight: (scores_by_weight[weight], -weight))
    fitted_on: dict[str, str | int | float] = {"examples": len(judged), "ranking_model": model.digest()}
    fitted_on |= {f"hit1_weight_{weight:g}": round(scores_by_weight[weight] / len(judged), 4) for weight in grid}
    decision: dict[str, LinearModel | float] = {}
    y = np.array([float(e.answerable) for e in usable])
    if not y.all():  # else nothing to tell answerable questions from
        # The fused ranking's P(answer) as unseen documents get it: from models fitted without
        # the example's document.
        p = out_of_fold_probabilities(usable, out_of_fold_rows(usable, model.ranker, model_spec(model)), y,
                                      model.abstention)
        x = np.vstack([abstention_row(float(pk), scores) for pk, scores in zip(p, logits, strict=True)])
        abstention = fit_linear(RERANK_ABSTENTION_FEATURES, x, y)
        budget = float(model.fitted_on.get("false_abstention_budget", SHIPPED_RECIPE.budgets[0]))
        decision = {"abstention": abstention,
                    "answer_threshold": budget_threshold(np.sort(abstention.probability(x[y == 1])), budget)}
        fitted_on["negatives"] = int(len(y) - y.sum())
    return RerankModel(scorer=scorer.name, weight=best, fitted_on=fitted_on | (note or {}), **decision)
