"""Order the candidate pages with the fitted model and decide whether the documents answer.

Abstention signals (the probability that the documents answer is fitted, on answerable
questions against unanswerable ones, off-topic ones, ones about something the document never
names, and the answerable ones asked of their own document without its evidence pages, over
the relative and share signals of `ABSTENTION_FEATURES`; the others are computed for the
record and for models fitted before):

| feature | what it measures |
|---|---|
| top_score | the ranker's score of its best page |
| margin | the ranker's score of the best page minus the runner-up's |
| support | IDF-weighted share of the question's terms on the best page or its section titles |
| proximity | best share of the question's terms found together in two sentences, any candidate |
| absent_terms | IDF-weighted share of the question's terms no document contains |
| unmentioned_names | share of the question's names that are proper names ("Toyota") no document mentions |
| unmentioned_abbreviations | share of its names that are abbreviations or codes ("GDP", "Q3") no document mentions |
| bm25 | log(1 + raw BM25 of the best page) |
| dense | best cosine of the question's embedding with a candidate page's |
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from services.navigator.evidence import page_fields
from services.navigator.ranking.features import CandidateSet
from services.navigator.ranking.model import RankingModel

# Every signal the answer decision could weigh, in the order of `abstention_row`.
ABSTENTION_SIGNALS = (
    "top_score", "margin", "support", "proximity", "absent_terms", "unmentioned_names", "unmentioned_abbreviations",
    "bm25", "dense",
)
# What the decision is fitted on: relative scores and shares, which mean the same on any kind
# of document. The best page's own score, its raw BM25 and its cosine depend on page length,
# vocabulary and genre: a decision weighing them refused a quarter of the answerable questions
# of a collection it was not fitted on (docs/querying.md, leave-one-collection-out).
ABSTENTION_FEATURES = (
    "margin", "support", "proximity", "absent_terms", "unmentioned_names", "unmentioned_abbreviations",
)


def decision_columns(features: list[str]) -> list[int]:
    """Where each of a model's abstention features sits in `abstention_row`."""
    unknown = [f for f in features if f not in ABSTENTION_SIGNALS]
    if unknown:
        raise ValueError(f"the abstention model weighs unknown features {unknown}; refit it with `make fit-ranker`")
    return [ABSTENTION_SIGNALS.index(f) for f in features]


@dataclass(frozen=True)
class MissingWords:
    """What of the question the documents lack, as shares. The two kinds of name are kept apart
    because they mean different things when missing: a proper name the documents never mention
    is usually what the question is about, an abbreviation is often only the asker's shorthand
    for something the documents spell out."""

    terms: float = 0.0  # IDF-weighted share of the question's terms no document contains
    names: float = 0.0  # share of the question's names: proper names no document mentions
    abbreviations: float = 0.0  # share of the question's names: abbreviations no document mentions

    @property
    def subject(self) -> bool:
        """The documents mention nothing the question names, and it names a proper name: they
        lack what it is about. That is evidence of absence strong enough to refuse on, however
        well the rest of the question matches (a question about one company asked of another's
        filing matches everything but the name)."""
        return self.names > 0 and self.names + self.abbreviations >= 1.0


@dataclass
class RankedPage:
    document: int  # position in the candidate set's documents
    page: int  # 1-based
    score: float  # exp(score - best score): 1 for the best page, less for the others (not a probability)


@dataclass
class FusedRanking:
    pages: list[RankedPage]
    answer_probability: float
    answerable: bool
    abstention_row: np.ndarray


def absent_share(weights: dict[str, float], vocabularies: list[frozenset[str]]) -> float:
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    missing = sum(w for t, w in weights.items() if not any(t in v for v in vocabularies))
    return missing / total


def abstention_row(
    candidates: CandidateSet, decision: np.ndarray, order: np.ndarray, missing: MissingWords
) -> np.ndarray:
    if not len(order):
        return np.array([0.0, 0.0, 0.0, 0.0, missing.terms, missing.names, missing.abbreviations, 0.0, 0.0])
    top = int(order[0])
    margin = float(decision[top] - decision[int(order[1])]) if len(order) > 1 else float(decision[top])
    document, page = candidates.keys[top]
    rows = order  # the candidates judged: `order` may hold one document's only
    evidence = candidates.documents[document]
    support = float(page_fields(evidence.index).question_support(evidence.weights)[page - 1])
    raw_bm25 = float(candidates.column("bm25")[top]) * candidates.best_bm25
    return np.array([
        float(decision[top]),
        margin,
        support,
        float(candidates.column("proximity")[rows].max()),
        missing.terms,
        missing.names,
        missing.abbreviations,
        math.log1p(raw_bm25),
        float(candidates.column("dense_page")[rows].max()),
    ])


def rank(candidates: CandidateSet, model: RankingModel, missing: MissingWords) -> FusedRanking:
    """Candidates best first (ties in document and page order) and the answer decision. Over
    several documents, each page's score adds its document's log P(document | question),
    weighted as the router was fitted, and every page its own prior (`CandidateSet.prior`)."""
    own = model.ranker.decision(candidates.matrix)
    weight = model.router.prior_weight if model.router is not None else 0.0
    if weight and len(candidates.documents) > 1:
        priors = np.array([candidates.documents[document].log_prior for document, _ in candidates.keys])
        score = own + weight * priors
    else:
        score = own
    if candidates.prior.size and candidates.prior.any():
        # The pages a question about the document itself looks at first: they order the pages,
        # not the decision whether the documents answer (that reads the pages' own scores).
        score = score + candidates.prior
    order = _best_first(candidates, score)
    # Whether the documents answer is judged on the best page's own document, by the pages' own
    # scores: the abstention model was fitted on questions asked of one document, and two
    # documents holding near-copies of a page (one company's filings of two years) must not
    # make a clear answer look doubtful.
    own_order = order if score is own else _best_first(candidates, own)  # sorted once without a prior
    if len(candidates.documents) > 1 and len(order):
        chosen = candidates.keys[int(order[0])][0]
        own_order = np.array([k for k in own_order if candidates.keys[k][0] == chosen], dtype=np.int64)
    row = abstention_row(candidates, own, own_order, missing)
    judged = row[decision_columns(model.abstention.features)]
    probability = float(model.abstention.probability(judged[None, :])[0])
    best = float(score[order[0]]) if len(order) else 0.0
    pages = [
        RankedPage(candidates.keys[k][0], candidates.keys[k][1], math.exp(float(score[k]) - best)) for k in order
    ]
    answerable = probability >= model.answer_threshold and not missing.subject
    return FusedRanking(pages, probability, answerable, row)


def _best_first(candidates: CandidateSet, score: np.ndarray) -> np.ndarray:
    return np.array(sorted(range(len(candidates.keys)), key=lambda k: (-score[k], candidates.keys[k])), dtype=np.int64)
