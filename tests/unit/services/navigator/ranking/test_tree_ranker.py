"""The boosted-tree ranker scores pages with numpy alone, exactly as the library that fitted it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from services.navigator.ranking.features import FEATURES as RANKER_FEATURES
from services.navigator.ranking.model import RankingModel, TreeEnsemble
from treerag.evaluation.fitting import LOGISTIC, LOGISTIC_STRENGTHS, Example, _inner_splits, export_trees, select_ranker

FEATURES = [f"f{k}" for k in range(6)]


def _fitted(seed: int, depth: int, iterations: int, with_missing: bool) -> tuple[HistGradientBoostingClassifier, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(600, len(FEATURES))), 2)
    y = (x[:, 0] + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=600) > 0.2).astype(float)
    if with_missing:
        x[rng.random(x.shape) < 0.1] = np.nan
    classifier = HistGradientBoostingClassifier(max_depth=depth, max_iter=iterations, early_stopping=False,
                                                class_weight="balanced", random_state=0)
    return classifier.fit(x, y), rng


@pytest.mark.parametrize(("depth", "iterations", "with_missing"), [(2, 50, False), (3, 100, False), (3, 40, True)])
def test_exported_trees_score_exactly_as_the_fitted_classifier(depth: int, iterations: int, with_missing: bool) -> None:
    classifier, rng = _fitted(depth, depth, iterations, with_missing)
    ensemble = TreeEnsemble.model_validate_json(export_trees(classifier, FEATURES).model_dump_json())
    fresh = rng.normal(size=(500, len(FEATURES))) * 2
    fresh[rng.random(fresh.shape) < 0.15] = np.nan  # unseen missing values go where the library sends them
    assert np.abs(ensemble.decision(fresh) - classifier.decision_function(fresh)).max() <= 1e-9
    assert ensemble.decision(np.zeros((0, len(FEATURES)))).shape == (0,)


def test_a_trees_model_round_trips_through_its_file_and_keeps_its_digest() -> None:
    classifier, _ = _fitted(1, 2, 20, False)
    linear = {"features": ["a"], "mean": [0.0], "scale": [1.0], "coef": [1.0], "intercept": 0.0}
    model = RankingModel(ranker=export_trees(classifier, FEATURES), abstention=linear, answer_threshold=0.5)
    again = RankingModel.model_validate_json(model.to_json())
    assert again.ranker.kind == "trees" and again.digest() == model.digest()
    assert again.ranker.used_features() <= set(FEATURES)
    # A file without `kind` is a logistic ranker (files written before trees existed).
    older = json.loads(model.to_json()) | {"ranker": linear}
    assert RankingModel.model_validate(older).ranker.kind == "logistic"


def test_a_tree_pointing_outside_itself_is_refused() -> None:
    classifier, _ = _fitted(2, 2, 5, False)
    broken = export_trees(classifier, FEATURES).model_dump()
    broken["trees"][0]["left"][0] = 99
    with pytest.raises(ValueError, match="refit"):
        TreeEnsemble.model_validate(broken)


def test_scoring_pages_does_not_import_the_fitting_library() -> None:
    code = ("import sys, numpy as np; from services.navigator.ranking.model import load_model;"
            "m = load_model(); m.ranker.decision(np.zeros((3, len(m.ranker.features))));"
            "print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _examples(rule: str, n: int = 100) -> list[Example]:
    """Questions with ten candidate pages each; the gold page is the one that best fits `rule`."""
    rng = np.random.default_rng(7)
    width = len(RANKER_FEATURES)
    examples = []
    for k in range(n):
        x = np.round(rng.random((10, width)), 2)  # few distinct values: quick to bin
        fit = np.abs(x[:, 0] - x[:, 1]) if rule == "apart" else x[:, 0] + x[:, 1]
        gold = int(np.argmax(fit))
        document = SimpleNamespace(index=SimpleNamespace(label=f"doc-{k % 20}.pdf"))
        candidates = SimpleNamespace(matrix=x, keys=[(0, page + 1) for page in range(10)], documents=[document])
        examples.append(Example(item_id=str(k), group=f"doc-{k % 20}.pdf",
                                exploration=SimpleNamespace(candidates=candidates),  # type: ignore[arg-type]
                                gold={(f"doc-{k % 20}.pdf", gold + 1)}))
    return examples


def test_nested_selection_picks_trees_only_where_a_linear_score_cannot_rank() -> None:
    # Gold when two features are far apart (either way round): no linear score orders that.
    spec, scores = select_ranker(_examples("apart"))
    assert spec.kind == "trees" and scores[spec.label] > scores["logistic"] + 0.2
    assert select_ranker(_examples("apart")) == (spec, scores)  # deterministic
    # Gold when their sum is largest: the logistic ranker does as well, and the simpler wins ties.
    spec, scores = select_ranker(_examples("sum"))
    assert scores["logistic"] >= max(scores.values()) - 0.05
    assert select_ranker(_examples("sum"), (LOGISTIC,)) == (LOGISTIC, {})


def test_the_ranker_strength_is_chosen_holding_out_one_collection_at_a_time() -> None:
    examples = [replace(e, collection="manuals" if k % 2 else "filings") for k, e in enumerate(_examples("sum"))]
    splits = _inner_splits(examples, by_collection=True)
    assert [sorted({e.collection for e in held}) for _, held in splits] == [["filings"], ["manuals"]]
    assert all(not {e.collection for e in train} & {e.collection for e in held} for train, held in splits)
    spec, scores = select_ranker(examples, LOGISTIC_STRENGTHS)
    assert set(scores) == {s.label for s in LOGISTIC_STRENGTHS} and spec in LOGISTIC_STRENGTHS
    assert select_ranker(examples, LOGISTIC_STRENGTHS) == (spec, scores)  # deterministic
    # One collection only: document folds, as before.
    assert len(_inner_splits(_examples("sum"), by_collection=True)) == 5
