"""Fit the ranking and abstention model from labelled questions.

An `Example` is one question asked of some documents, explored once (tree walk + candidate
pages; no model involved), with its gold pages, or none when the documents cannot answer it
(unanswerable items; off-topic, missing-name and evidence-removed pairs). Fitting:

1. *ranker*, one of the recipe's (`RECIPES`; the shipped recipe has the logistic one only): a
   pairwise logistic regression (a ranking objective: for every answerable example, every
   (gold page, other candidate) pair's feature difference, both ways round, standardised, no
   intercept; the page score is the linear score of its own features), or boosted regression
   trees (pointwise: gold page or not, classes balanced; the page score is the trees'
   log-odds). When the recipe offers several, the one is chosen by *nested* cross-validation:
   held-out hit@1 over `INNER_FOLDS` folds by document of the training examples only; a tie
   keeps the earlier, simpler entry;
2. *abstention*: logistic regression, the documents answer or not, over every example's
   abstention features, each computed with a ranker fitted without the example's document
   (`INNER_FOLDS` folds by document), so that they look as they will on unseen documents;
3. *answer threshold*: the lowest probability that abstains on at most a budget of the
   answerable training examples, each judged by an abstention model fitted without its
   document (in-sample probabilities flatter the training questions, and a threshold set on
   them refuses more unseen questions). The budget is the recipe's, or, when it offers
   several (`BUDGET_GRID`), the largest whose nested held-out false abstention (the whole
   recipe fitted without the inner fold's documents, judged on them) stays within
   `TARGET_FALSE_ABSTENTION`, the product's tolerance for refusing a question it could
   answer; the smallest when none does.

Deterministic: same examples, same model (lbfgs from zeros; the trees with a fixed seed, no
early stopping and one thread, so no parallel sum changes a split).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from services.navigator.index import DocumentIndex
from services.navigator.navigate import Exploration, explore
from services.navigator.ranking.features import FEATURES
from services.navigator.ranking.fused import ABSTENTION_FEATURES, ABSTENTION_SIGNALS, decision_columns, rank
from services.navigator.ranking.model import LinearModel, RankingModel, Tree, TreeEnsemble
from shared.model.query import QuerySettings
from shared.text.names import mentioned
from treerag.evaluation.dataset import QAItem
from treerag.evaluation.embedding import embedder_name, harness_embedder
from treerag.evaluation.folds import NegativePair, evidence_removed_pairs, missing_name_pairs, off_topic_pairs
from treerag.evaluation.removal import AskedDocuments
from treerag.evaluation.routing_fit import CorpusQuestion, fit_router
from treerag.evaluation.self_pairs import PAGES_PER_DOCUMENT, shelf_questions

# Shares of answerable training questions the fitted threshold may abstain on, tried in order.
BUDGET_GRID = (0.02, 0.03, 0.04, 0.05)
# The shipped models' choice: no more than the share held-out collections tolerate.
SHIPPED_BUDGETS = (0.01, 0.02, 0.03)
# The product's tolerance for refusing a question it could answer (held-out).
TARGET_FALSE_ABSTENTION = 0.05
REGULARISATION = 1.0
INNER_FOLDS = 5
LEARNING_RATE = 0.1


@dataclass(frozen=True)
class RankerSpec:
    kind: Literal["logistic", "trees"]
    depth: int = 0
    iterations: int = 0
    # The logistic ranker's inverse L2 strength: smaller keeps its weights closer to zero, so
    # fewer of them carry what only the training collections have in common.
    regularisation: float = REGULARISATION

    @property
    def label(self) -> str:
        if self.kind == "trees":
            return f"trees-d{self.depth}-n{self.iterations}"
        return self.kind if self.regularisation == REGULARISATION else f"{self.kind}-c{self.regularisation:g}"


LOGISTIC = RankerSpec("logistic")
# The logistic ranker's strengths a fit chooses from, strongest first (a tie keeps the earlier).
LOGISTIC_STRENGTHS = tuple(RankerSpec("logistic", regularisation=c) for c in (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, REGULARISATION))
# Simplest first: a tie keeps the earlier entry.
RANKER_GRID = (LOGISTIC, RankerSpec("trees", 2, 50), RankerSpec("trees", 2, 100), RankerSpec("trees", 3, 50),
               RankerSpec("trees", 3, 100))


@dataclass(frozen=True)
class Recipe:
    """The rankers and false-abstention budgets a fit chooses from (by nested cross-validation
    when there is more than one)."""

    rankers: tuple[RankerSpec, ...]
    budgets: tuple[float, ...]


# What the shipped models are fitted with: nested selection over the grids measured no better
# held out (docs/measurements.md, "Questions"), so it stays an option of `treerag eval --recipe nested`.
RECIPES = {"shipped": Recipe(LOGISTIC_STRENGTHS, SHIPPED_BUDGETS), "nested": Recipe(RANKER_GRID, BUDGET_GRID)}
SHIPPED_RECIPE = RECIPES["shipped"]
Ranker = LinearModel | TreeEnsemble


@dataclass
class Example:
    item_id: str
    group: str  # the document that decides the example's fold
    exploration: Exploration
    gold: set[tuple[str, int]] = field(default_factory=set)  # (file name, 1-based page)
    collection: str = ""  # the question set of the document asked

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


def model_spec(model: RankingModel) -> RankerSpec:
    """The kind and size of ranker `model` was fitted with (the unshrunk logistic one when its
    file does not say), so that a fit built on it refits the same kind."""
    label = str(model.fitted_on.get("ranker", LOGISTIC.label))
    known = {spec.label: spec for spec in (*RANKER_GRID, *LOGISTIC_STRENGTHS)}
    return known.get(label, LOGISTIC)


def fit_ranker(examples: Sequence[Example], spec: RankerSpec = LOGISTIC) -> Ranker:
    return fit_pairwise(examples, spec.regularisation) if spec.kind == "logistic" else fit_trees(examples, spec)


def pointwise_rows(examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Candidate features and gold labels of every answerable example with a gold candidate."""
    x, y = [], []
    for example in examples:
        candidates = example.exploration.candidates
        if not example.answerable or candidates is None or not len(candidates.keys):
            continue
        labels = example.labels()
        if labels.any():
            x.append(candidates.matrix)
            y.append(labels)
    if not x:
        raise ValueError("no answerable example has a gold page among its candidates; check the data")
    return np.vstack(x), np.concatenate(y)


def fit_trees(examples: Sequence[Example], spec: RankerSpec) -> TreeEnsemble:
    x, y = pointwise_rows(examples)
    if y.all():
        raise ValueError("every candidate is a gold page; nothing to rank")
    classifier = HistGradientBoostingClassifier(
        max_depth=spec.depth, max_iter=spec.iterations, learning_rate=LEARNING_RATE, class_weight="balanced",
        early_stopping=False, random_state=0,
    )
    with threadpool_limits(limits=1):
        classifier.fit(x, y)
    return export_trees(classifier, FEATURES)


def export_trees(classifier: HistGradientBoostingClassifier, features: Sequence[str]) -> TreeEnsemble:
    """The fitted binary classifier's trees as plain node arrays (numeric features only)."""
    if classifier.n_trees_per_iteration_ != 1:
        raise ValueError("only a binary classifier's trees can be exported")
    trees = []
    for (predictor,) in classifier._predictors:
        nodes = predictor.nodes
        if nodes["is_categorical"].any():
            raise ValueError("categorical splits cannot be exported; fit on numeric features")
        leaf = nodes["is_leaf"].astype(bool)
        trees.append(Tree(
            feature=[-1 if lf else int(f) for f, lf in zip(nodes["feature_idx"], leaf, strict=True)],
            threshold=[0.0 if lf else float(t) for t, lf in zip(nodes["num_threshold"], leaf, strict=True)],
            left=[-1 if lf else int(c) for c, lf in zip(nodes["left"], leaf, strict=True)],
            right=[-1 if lf else int(c) for c, lf in zip(nodes["right"], leaf, strict=True)],
            missing_left=[bool(m) and not lf for m, lf in zip(nodes["missing_go_to_left"], leaf, strict=True)],
            value=[float(v) if lf else 0.0 for v, lf in zip(nodes["value"], leaf, strict=True)],
        ))
    return TreeEnsemble(features=list(features), baseline=float(classifier._baseline_prediction[0, 0]), trees=trees)


def fit_pairwise(examples: Sequence[Example], regularisation: float = REGULARISATION) -> LinearModel:
    preferred = preference_pairs(examples)
    x = np.vstack([preferred, -preferred])
    y = np.concatenate([np.ones(len(preferred)), np.zeros(len(preferred))])
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    classifier = LogisticRegression(C=regularisation, fit_intercept=False, max_iter=5000)
    classifier.fit(x / scale, y)
    return LinearModel(
        features=list(FEATURES), mean=[0.0] * len(FEATURES), scale=[round(float(v), 6) for v in scale],
        coef=[round(float(v), 6) for v in classifier.coef_[0]], intercept=0.0,
    )


def abstention_rows(examples: Sequence[Example], ranker: Ranker) -> np.ndarray:
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
            rows.append(np.zeros(len(ABSTENTION_SIGNALS)))
            continue
        rows.append(rank(found.candidates, placeholder, found.missing).abstention_row)
    return np.vstack(rows)[:, decision_columns(list(ABSTENTION_FEATURES))]


def out_of_fold_rows(examples: Sequence[Example], fallback: Ranker, spec: RankerSpec = LOGISTIC) -> np.ndarray:
    """Abstention features of every example, from a ranker fitted on the other documents
    (`fallback` where too few documents are left to fit one)."""
    folds = inner_folds(examples)
    rows = np.zeros((len(examples), len(ABSTENTION_FEATURES)))
    for fold in np.unique(folds):
        inside = [k for k in range(len(examples)) if folds[k] == fold]
        outside = [e for k, e in enumerate(examples) if folds[k] != fold]
        try:
            ranker = fit_ranker(outside, spec)
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


def budget_threshold(answerable_p: np.ndarray, budget: float) -> float:
    """The answer threshold that abstains on at most `budget` of the answerable questions whose
    sorted P(answer) is `answerable_p`; rounded down, so the stored threshold never abstains on
    more of them than allowed."""
    allowed = int(np.floor(budget * len(answerable_p)))
    return math.floor(float(answerable_p[min(allowed, len(answerable_p) - 1)]) * 1e6) / 1e6


@dataclass
class FittedParts:
    ranker: Ranker
    abstention: LinearModel
    answerable_p: np.ndarray  # sorted out-of-fold P(answer) of the answerable examples
    answerable: int
    negatives: int

    def threshold(self, budget: float) -> float:
        return budget_threshold(self.answerable_p, budget)

    def model(self, budget: float, fitted_on: dict[str, str | int | float] | None = None) -> RankingModel:
        return RankingModel(ranker=self.ranker, abstention=self.abstention, answer_threshold=self.threshold(budget),
                            fitted_on=fitted_on or {})


def fit_parts(examples: Sequence[Example], spec: RankerSpec) -> FittedParts:
    ranker = fit_ranker(examples, spec)
    usable = [e for e in examples if e.exploration.candidates is not None]
    x = out_of_fold_rows(usable, ranker, spec)
    y = np.array([float(e.answerable) for e in usable])
    if y.all() or not y.any():
        raise ValueError("abstention needs answerable and unanswerable examples; add off-topic pairs")
    abstention = fit_linear(ABSTENTION_FEATURES, x, y)
    answerable_p = np.sort(out_of_fold_probabilities(usable, x, y, abstention)[y == 1])
    return FittedParts(ranker, abstention, answerable_p, int(y.sum()), int(len(y) - y.sum()))


def _top_is_gold(example: Example, scores: np.ndarray) -> bool:
    candidates = example.exploration.candidates
    if candidates is None or not len(candidates.keys):
        return False
    best = min(range(len(candidates.keys)), key=lambda k: (-scores[k], candidates.keys[k]))  # as `rank` orders
    return bool(example.labels()[best])


def _inner_splits(examples: Sequence[Example], by_collection: bool = False) -> list[tuple[list[Example], list[Example]]]:
    """(training, held-out) inner splits: by document (`INNER_FOLDS` folds), or, `by_collection`
    with examples of several collections, one collection held out at a time."""
    collections = sorted({e.collection for e in examples if e.collection})
    if by_collection and len(collections) >= 2:
        return [([e for e in examples if e.collection != name], [e for e in examples if e.collection == name])
                for name in collections]
    folds = inner_folds(examples)
    return [([e for e, f in zip(examples, folds, strict=True) if f != fold],
             [e for e, f in zip(examples, folds, strict=True) if f == fold]) for fold in np.unique(folds)]


def select_ranker(
    examples: Sequence[Example], grid: Sequence[RankerSpec] = RANKER_GRID
) -> tuple[RankerSpec, dict[str, float]]:
    """The grid entry with the best held-out hit@1 over inner splits (ties: the earlier entry),
    with every entry's score. With examples of several collections, each collection is held out
    in turn: what is chosen is what carries over to a kind of document the fit did not see."""
    if len(grid) == 1:
        return grid[0], {}
    hits = {spec: 0 for spec in grid}
    answerable = 0
    for train, held_out in _inner_splits(examples, by_collection=True):
        judged = [e for e in held_out if e.answerable]
        answerable += len(judged)
        for spec in grid:
            try:
                ranker = fit_ranker(train, spec)
            except ValueError:
                continue  # too few training documents: the entry scores nothing on this fold
            hits[spec] += sum(_top_is_gold(e, ranker.decision(e.exploration.candidates.matrix))
                              for e in judged if e.exploration.candidates is not None)
    scores = {spec.label: round(hits[spec] / max(answerable, 1), 4) for spec in grid}
    best = max(grid, key=lambda spec: (hits[spec], -list(grid).index(spec)))
    return best, scores


def select_budget(
    examples: Sequence[Example], spec: RankerSpec, budgets: Sequence[float] = BUDGET_GRID
) -> tuple[float, dict[str, float]]:
    """The largest of `budgets` whose held-out false abstention over inner splits (a
    collection at a time when the examples hold several, as `select_ranker`) is within
    `TARGET_FALSE_ABSTENTION` (else the smallest), with every budget's rate."""
    if len(budgets) == 1:
        return budgets[0], {}
    refused = dict.fromkeys(budgets, 0)
    answerable = 0
    for train, held_out in _inner_splits(examples, by_collection=True):
        try:
            parts = fit_parts(train, spec)
        except ValueError:
            continue
        for example in held_out:
            found = example.exploration
            if not example.answerable:
                continue
            answerable += 1
            if found.candidates is None:
                for budget in budgets:
                    refused[budget] += 1
                continue
            p = rank(found.candidates, parts.model(0.0), found.missing).answer_probability
            for budget in budgets:
                refused[budget] += p < parts.threshold(budget)
    rates = {f"{budget:.2f}": round(refused[budget] / max(answerable, 1), 4) for budget in budgets}
    within = [b for b in budgets if answerable and refused[b] / answerable <= TARGET_FALSE_ABSTENTION]
    return (max(within) if within else min(budgets)), rates


def fit_model(
    examples: Sequence[Example], note: dict[str, str | int | float] | None = None,
    recipe: Recipe = SHIPPED_RECIPE, corpus: Sequence[CorpusQuestion] = (), lexical: bool = False,
) -> RankingModel:
    """The recipe's ranker kind and size, then its false-abstention budget, each chosen by
    nested cross-validation on `examples` (when it offers a choice), then every part fitted on
    all of them; then, given `corpus` questions (asked of several documents), the router
    (`routing_fit`). `lexical`: the examples' dense features are zero (embeddings off)."""
    spec, ranker_scores = select_ranker(examples, recipe.rankers)
    budget, budget_rates = select_budget(examples, spec, recipe.budgets)
    parts = fit_parts(examples, spec)
    fitted_on: dict[str, str | int | float] = {"answerable": parts.answerable, "negatives": parts.negatives}
    if len(recipe.rankers) > 1 or len(recipe.budgets) > 1:
        fitted_on |= {"ranker": spec.label, "false_abstention_budget": budget}
    fitted_on.update({f"inner_hit1_{label}": score for label, score in ranker_scores.items()})
    fitted_on.update({f"inner_false_abstention_{label}": rate for label, rate in budget_rates.items()})
    fitted_on.update(note or {})
    model = parts.model(budget, fitted_on)
    if corpus:
        model = model.model_copy(update={"router": fit_router(corpus, model, QuerySettings(), lexical)})
    return model


def explore_examples(
    items: Sequence[QAItem], pairs: Sequence[NegativePair], indexes: Mapping[str, DocumentIndex],
    settings: QuerySettings, asked: AskedDocuments | None = None, collection_of: Mapping[str, str] | None = None,
) -> tuple[list[Example], list[Example]]:
    """Model-free explorations of every item (with its gold pages) and every negative pair
    (each of the document `asked` gives it; by default built from `indexes`); `collection_of`
    names each document's question set."""
    auto = settings.model_copy(update={"mode": "auto"})
    asked = asked or AskedDocuments(indexes)
    sets = collection_of or {}
    embedder = harness_embedder()
    labelled = [
        Example(item.id, item.doc, explore(item.question, [indexes[item.doc]], auto, embedder=embedder),
                {(item.doc, p) for p in item.evidence_pages} if item.answerable else set(), sets.get(item.doc, ""))
        for item in items
    ]
    negatives = [Example(p.item_id, p.doc, explore(p.question, [asked.of(p)], auto, embedder=embedder),
                         collection=sets.get(p.doc, ""))
                 for p in pairs]
    return labelled, negatives


def document_collections(collections: Mapping[str, Sequence[QAItem]]) -> dict[str, str]:
    """The question set of each document (the first by name when two sets ask about one)."""
    owner: dict[str, str] = {}
    for name in sorted(collections):
        for item in collections[name]:
            owner.setdefault(item.doc, name)
    return owner


def without_dense(examples: Sequence[Example]) -> list[Example]:
    """Copies of the examples with the dense features at zero (as when embeddings are off)."""
    out = []
    for example in examples:
        found = example.exploration
        if found.candidates is not None:
            found = replace(found, candidates=found.candidates.without_dense())
        out.append(replace(example, exploration=found))
    return out


def negative_pairs(
    collections: Mapping[str, Sequence[QAItem]], indexes: Mapping[str, DocumentIndex]
) -> list[NegativePair]:
    """What the abstention model learns to refuse besides unanswerable items: the off-topic
    pairs, the missing-name pairs, then the evidence-removed pairs (`treerag.evaluation.folds`)."""

    def mentions(doc: str, term: str) -> bool:
        index = indexes[doc]
        return mentioned(term, index.vocabulary, index.vocabulary_by_initial)

    return off_topic_pairs(collections) + missing_name_pairs(collections, mentions) + evidence_removed_pairs(collections)


def fit_collections(
    collections: Mapping[str, Sequence[QAItem]], indexes: Mapping[str, DocumentIndex], settings: QuerySettings,
    lexical: bool = True, pool: Sequence[str] = (), self_pairs: int = PAGES_PER_DOCUMENT,
) -> tuple[RankingModel, RankingModel | None]:
    """The shipped models' recipe: every question on its own document plus the pairs of
    `negative_pairs`, all fitted at once; (with dense features, lexical only: None unless
    `lexical`)."""
    items = [item for name in sorted(collections) for item in collections[name]]
    labelled, negatives = explore_examples(items, negative_pairs(collections, indexes), indexes, settings,
                                           collection_of=document_collections(collections))
    note: dict[str, str | int | float] = {"datasets": ",".join(sorted(collections)),
                                          "embeddings": embedder_name() or "off"}
    examples = labelled + negatives
    corpus = corpus_questions(collections, indexes, lambda doc: True, pool, self_pairs)
    dense = fit_model(examples, note, corpus=corpus)
    if not lexical:
        return dense, None
    return dense, fit_model(without_dense(examples), note | {"embeddings": "off"}, corpus=corpus, lexical=True)


def corpus_questions(
    collections: Mapping[str, Sequence[QAItem]], indexes: Mapping[str, DocumentIndex], keep: Callable[[str], bool],
    pool: Sequence[str] = (), self_pairs: int = PAGES_PER_DOCUMENT,
) -> list[CorpusQuestion]:
    """Every answerable question whose document `keep`s, asked of every kept document of its
    collection and, when its documents are stored among the `pool` (a shared store), every kept
    pool document beside them (a company's other years and forms are the hardest negatives),
    then the questions of `self_pairs` pages of each of those documents, asked of the same shelf
    (`self_pairs`); a shelf of one document asks nothing."""
    questions = []
    pooled = set(pool)
    for name in sorted(collections):
        own = {item.doc for item in collections[name]}
        beside = pooled if own & pooled else set()
        docs = sorted({*(d for d in own if keep(d)), *(d for d in beside if keep(d))})
        if len(docs) < 2:
            continue
        shelf = tuple(indexes[doc] for doc in docs)
        questions += [CorpusQuestion(item.id, item.question, item.doc,
                                     frozenset((item.doc, p) for p in item.evidence_pages), shelf)
                      for item in collections[name] if item.answerable and keep(item.doc)]
        questions += shelf_questions(shelf, self_pairs)
    return questions
