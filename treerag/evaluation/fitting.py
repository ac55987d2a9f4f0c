"""Fit the ranking and abstention model from labelled questions.

An `Example` is one question asked of some documents, explored once (tree walk + candidate
pages; no model involved), with its gold pages, or none when the documents cannot answer it
(unanswerable items, off-topic pairs). Fitting:

1. *ranker*: pairwise logistic regression (a ranking objective): for every answerable example,
   every (gold page, other candidate) pair's feature difference, both ways round, standardised,
   no intercept; the page score is then the linear score of its own features;
2. *abstention*: logistic regression, the documents answer or not, over every example's
   abstention features, each computed with a ranker fitted without the example's document
   (`INNER_FOLDS` folds by document), so that they look as they will on unseen documents;
3. *answer threshold*: the lowest probability that abstains on at most
   `FALSE_ABSTENTION_BUDGET` of the answerable training examples, each judged by an
   abstention model fitted without its document (in-sample probabilities flatter the
   training questions, and a threshold set on them refuses more unseen questions).

Deterministic: same examples, same model (lbfgs from zeros, no random state involved).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.linear_model import LogisticRegression

from services.navigator.index import DocumentIndex
from services.navigator.navigate import Exploration, explore
from services.navigator.ranking.dense import embedder_name
from services.navigator.ranking.features import FEATURES
from services.navigator.ranking.fused import ABSTENTION_FEATURES, rank
from services.navigator.ranking.model import LinearModel, RankingModel
from shared.model.query import QuerySettings
from treerag.evaluation.dataset import QAItem
from treerag.evaluation.folds import OffTopicPair, off_topic_pairs

# Share of answerable training questions the fitted threshold may abstain on (the product's
# tolerance for refusing a question it could answer).
FALSE_ABSTENTION_BUDGET = 0.03
REGULARISATION = 1.0
INNER_FOLDS = 5


@dataclass
class Example:
    item_id: str
    group: str  # the document that decides the example's fold
    exploration: Exploration
    gold: set[tuple[str, int]] = field(default_factory=set)  # (file name, 1-based page)

    @property
    def answerable(self) -> bool:
        return bool(self.gold)

    def labels(self) -> np.ndarray:
        candidates = self.exploration.candidates
        if candidates is None:
            return np.zeros(0)
        names = [d.index.label for d in candidates.documents]
        return np.array([float((names[doc], page) in self.gold) for doc, page in candidates.keys])


def fit_linear(features: Sequence[str], x: np.ndarray, y: np.ndarray) -> LinearModel:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    classifier = LogisticRegression(C=REGULARISATION, class_weight="balanced", max_iter=5000)
    classifier.fit((x - mean) / scale, y)

    def rounded(values: np.ndarray) -> list[float]:
        return [round(float(v), 6) for v in values]

    return LinearModel(
        features=list(features), mean=rounded(mean), scale=rounded(scale),
        coef=rounded(classifier.coef_[0]), intercept=round(float(classifier.intercept_[0]), 6),
    )


def preference_pairs(examples: Sequence[Example]) -> np.ndarray:
    """Feature differences (gold page minus other candidate) of every answerable example."""
    differences = []
    for example in examples:
        candidates = example.exploration.candidates
        if not example.answerable or candidates is None or not len(candidates.keys):
            continue
        y = example.labels()
        gold, other = candidates.matrix[y == 1], candidates.matrix[y == 0]
        if len(gold) and len(other):
            # Every gold page against every other candidate (no gold page: nothing to learn).
            differences.append((gold[:, None, :] - other[None, :, :]).reshape(-1, candidates.matrix.shape[1]))
    if not differences:
        raise ValueError("no answerable example has a gold page among its candidates; check the data")
    return np.vstack(differences)


def fit_ranker(examples: Sequence[Example]) -> LinearModel:
    preferred = preference_pairs(examples)
    x = np.vstack([preferred, -preferred])
    y = np.concatenate([np.ones(len(preferred)), np.zeros(len(preferred))])
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    classifier = LogisticRegression(C=REGULARISATION, fit_intercept=False, max_iter=5000)
    classifier.fit(x / scale, y)
    return LinearModel(
        features=list(FEATURES), mean=[0.0] * len(FEATURES), scale=[round(float(v), 6) for v in scale],
        coef=[round(float(v), 6) for v in classifier.coef_[0]], intercept=0.0,
    )


def abstention_rows(examples: Sequence[Example], ranker: LinearModel) -> np.ndarray:
    placeholder = RankingModel(
        ranker=ranker,
        abstention=LinearModel(features=list(ABSTENTION_FEATURES), mean=[0.0] * len(ABSTENTION_FEATURES),
                               scale=[1.0] * len(ABSTENTION_FEATURES), coef=[0.0] * len(ABSTENTION_FEATURES),
                               intercept=0.0),
        answer_threshold=0.0,
    )
    rows = []
    for example in examples:
        found = example.exploration
        if found.candidates is None:
            rows.append(np.zeros(len(ABSTENTION_FEATURES)))
            continue
        rows.append(rank(found.candidates, placeholder, found.absent_terms, found.unmentioned_names).abstention_row)
    return np.vstack(rows)


def out_of_fold_rows(examples: Sequence[Example], fallback: LinearModel) -> np.ndarray:
    """Abstention features of every example, from a ranker fitted on the other documents
    (`fallback` where too few documents are left to fit one)."""
    folds = inner_folds(examples)
    rows = np.zeros((len(examples), len(ABSTENTION_FEATURES)))
    for fold in np.unique(folds):
        inside = [k for k in range(len(examples)) if folds[k] == fold]
        outside = [e for k, e in enumerate(examples) if folds[k] != fold]
        try:
            ranker = fit_ranker(outside)
        except ValueError:
            ranker = fallback
        rows[inside] = abstention_rows([examples[k] for k in inside], ranker)
    return rows


def inner_folds(examples: Sequence[Example]) -> np.ndarray:
    """The inner fold of every example, by document (`INNER_FOLDS` folds)."""
    groups = sorted({e.group for e in examples})
    fold_of = {group: k % INNER_FOLDS for k, group in enumerate(groups)}
    return np.array([fold_of[e.group] for e in examples], dtype=np.int64)


def out_of_fold_probabilities(examples: Sequence[Example], x: np.ndarray, y: np.ndarray,
                              fallback: LinearModel) -> np.ndarray:
    """P(the documents answer) of every example from an abstention model fitted on the other
    documents (`fallback` where the other documents hold a single class)."""
    folds = inner_folds(examples)
    p = np.zeros(len(examples))
    for fold in np.unique(folds):
        inside = folds == fold
        outside = y[~inside]
        model = fallback if outside.all() or not outside.any() else fit_linear(ABSTENTION_FEATURES, x[~inside], outside)
        p[inside] = model.probability(x[inside])
    return p


def fit_model(examples: Sequence[Example], note: dict[str, str | int | float] | None = None) -> RankingModel:
    ranker = fit_ranker(examples)
    usable = [e for e in examples if e.exploration.candidates is not None]
    x = out_of_fold_rows(usable, ranker)
    y = np.array([float(e.answerable) for e in usable])
    if y.all() or not y.any():
        raise ValueError("abstention needs answerable and unanswerable examples; add off-topic pairs")
    abstention = fit_linear(ABSTENTION_FEATURES, x, y)
    answerable_p = np.sort(out_of_fold_probabilities(usable, x, y, abstention)[y == 1])
    allowed = int(np.floor(FALSE_ABSTENTION_BUDGET * len(answerable_p)))
    # Rounded down: the stored threshold never abstains on more training questions than allowed.
    threshold = math.floor(float(answerable_p[allowed]) * 1e6) / 1e6
    fitted_on = {"answerable": int(y.sum()), "negatives": int(len(y) - y.sum())}
    fitted_on.update(note or {})
    return RankingModel(ranker=ranker, abstention=abstention, answer_threshold=threshold, fitted_on=fitted_on)


def explore_examples(
    items: Sequence[QAItem], pairs: Sequence[OffTopicPair], indexes: Mapping[str, DocumentIndex],
    settings: QuerySettings,
) -> tuple[list[Example], list[Example]]:
    """Model-free explorations of every item (with its gold pages) and every off-topic pair."""
    auto = settings.model_copy(update={"mode": "auto"})
    labelled = [
        Example(item.id, item.doc, explore(item.question, [indexes[item.doc]], auto),
                {(item.doc, p) for p in item.evidence_pages} if item.answerable else set())
        for item in items
    ]
    negatives = [Example(p.item_id, p.doc, explore(p.question, [indexes[p.doc]], auto)) for p in pairs]
    return labelled, negatives


DENSE_FEATURES = ("dense_page", "dense_section", "dense_rank")


def without_dense(examples: Sequence[Example]) -> list[Example]:
    """Copies of the examples with the dense features at zero (as when embeddings are off)."""
    columns = [FEATURES.index(name) for name in DENSE_FEATURES]
    out = []
    for example in examples:
        found = example.exploration
        if found.candidates is not None:
            matrix = found.candidates.matrix.copy()
            matrix[:, columns] = 0.0
            found = replace(found, candidates=replace(found.candidates, matrix=matrix))
        out.append(replace(example, exploration=found))
    return out


def fit_collections(
    collections: Mapping[str, Sequence[QAItem]], indexes: Mapping[str, DocumentIndex], settings: QuerySettings
) -> tuple[RankingModel, RankingModel]:
    """The shipped models' recipe: every question on its own document plus the off-topic
    pairs of `off_topic_pairs`, all fitted at once; (with dense features, lexical only)."""
    items = [item for name in sorted(collections) for item in collections[name]]
    labelled, negatives = explore_examples(items, off_topic_pairs(collections), indexes, settings)
    note = {"datasets": ",".join(sorted(collections)), "embeddings": embedder_name() or "off"}
    examples = labelled + negatives
    return fit_model(examples, note), fit_model(without_dense(examples), note | {"embeddings": "off"})
