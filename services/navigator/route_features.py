"""Which documents a question asks about, when it is asked of several at once.

Every document gets nine features, each relative to the best document for the question (so one
set of weights serves any number of documents):

| feature | what it measures |
|---|---|
| page | BM25 of the document's best page (what the question asks about) |
| opening | the question's terms on the opening pages, each weighted by how few openings hold it (whose document: the company, the product, the parties) |
| opening_numbers | the same for the numbers inside the question's mixed terms ("FY2017" → "2017"): covers print the year, questions name it in their own notation |
| dense | best cosine of the question's embedding with one of the document's pages |
| card_name | the question's names (words written with a capital or a digit first) in the document's card (title, issuer, subject) and file name, each weighted by how few cards hold it |
| card_words | the same for the question's other terms |
| card_year | 1 when the card's fiscal year is the one asked about, 0.5 when the document covers it only among other years |
| card_quarter | 1 when the card's span is the asked one (the quarter named, or a whole year when only a year is) |
| card_latest | when the question names no period: 1 for the latest documents among those its names match best |

The routing score is a linear score over them (`RouterModel`), fitted on training questions
asked of every training document of their collection (gold document against the others). Its
softmax over the documents is P(document | question); the page ranking adds its logarithm,
times a fitted weight, to every page's score, so a page of the document the question names
outranks a look-alike page of another one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np

from services.navigator.card_match import identity_match, latest_named, period_matches, split_by_name
from services.navigator.index import DocumentIndex
from services.navigator.ranking.dense import page_vectors, question_vector
from services.navigator.ranking.model import RouterModel
from shared.ports.model_roles import Embedder
from shared.text.lexical import bm25_idf

ROUTING_FEATURES = (
    "page", "opening", "opening_numbers", "dense", "card_name", "card_year", "card_quarter", "card_words", "card_latest",
)
# A document names its subject (the company, the product, the parties) on its opening pages.
OPENING_PAGES = 2
# Digit runs of at least two digits inside a term that also holds letters ("fy2017", "q3fy23").
_NUMBER_IN_TERM = re.compile(r"\d{2,}")
# Without a fitted router (models fitted before routing was): the best page and the opening pages
# weigh the same, and the routing probability does not enter the page scores.
UNFITTED_ROUTER = RouterModel(features=list(ROUTING_FEATURES[:4]), coef=[1.0, 1.0, 0.0, 0.0], prior_weight=0.0)


def number_terms(qterms: Sequence[str]) -> list[str]:
    """The numbers written inside the question's mixed letter-and-digit terms, once each."""
    found = [n for t in qterms if not t.isdigit() for n in _NUMBER_IN_TERM.findall(t)]
    return [n for n in dict.fromkeys(found) if n not in qterms]


def opening_terms(index: DocumentIndex) -> frozenset[str]:
    """The terms of the document's opening pages, read from its page analysis (each page's
    `terms`), so routing a store reads no page text."""

    def found() -> frozenset[str]:
        analysis, words = index.analysis, index.analysis.vocabulary.words
        return frozenset(words[i] for p in range(min(OPENING_PAGES, analysis.page_count))
                         for i in analysis.pages.row(p).tolist())

    return index.derive("opening_terms", found)


def opening_match(indexes: Sequence[DocumentIndex], qterms: Sequence[str]) -> np.ndarray:
    """Per index: the terms on its opening pages, each weighted by how few of the documents'
    opening pages hold it (a term on every cover tells none apart)."""
    openings = [opening_terms(ix) for ix in indexes]
    weights = {t: bm25_idf(len(openings), sum(t in o for o in openings)) for t in dict.fromkeys(qterms)}
    return np.array([sum(w for t, w in weights.items() if t in o) for o in openings], dtype=np.float64)


def _relative(values: np.ndarray) -> np.ndarray:
    best = float(values.max()) if values.size else 0.0
    return values / best if best > 0 else np.zeros_like(values)


def routing_matrix(
    question: str, indexes: Sequence[DocumentIndex], qterms: Sequence[str], page_strength: Sequence[float],
    router: RouterModel, embedder: Embedder | None = None,
) -> np.ndarray:
    """One row per document, one column per feature of `router` (`page_strength`: each
    document's best page BM25; `dense` by `embedder`, zero without one). A feature the router
    does not weigh is left at zero."""
    unknown = set(router.features) - set(ROUTING_FEATURES)
    if unknown:
        raise ValueError(f"the router weighs unknown features {sorted(unknown)}; refit it with `python -m bench.fit_ranker`")
    weighed = {name for name, c in zip(router.features, router.coef, strict=True) if c != 0.0}
    names, others = split_by_name(question, qterms)

    @cache  # two features read each of these
    def name_match() -> np.ndarray:
        return identity_match(indexes, names)

    @cache
    def period_columns() -> tuple[np.ndarray, np.ndarray]:
        return period_matches(indexes, question)

    def column(name: str) -> np.ndarray:
        if name not in weighed:
            return np.zeros(len(indexes))
        if name == "page":
            return np.asarray(page_strength, dtype=np.float64)
        if name == "opening":
            return opening_match(indexes, qterms)
        if name == "opening_numbers":
            return opening_match(indexes, number_terms(qterms))
        if name == "card_name":
            return name_match()
        if name == "card_words":
            return identity_match(indexes, others)
        if name == "card_latest":
            return latest_named(indexes, name_match(), question)
        if name in ("card_year", "card_quarter"):
            years, quarters = period_columns()
            return years if name == "card_year" else quarters
        asked = question_vector(question, embedder)
        if not asked.any():
            return np.zeros(len(indexes))
        return np.array([max(0.0, float((page_vectors(ix, embedder) @ asked).max())) if ix.has_pages else 0.0
                         for ix in indexes])

    return np.column_stack([_relative(column(name)) for name in router.features])


def log_probabilities(scores: np.ndarray) -> np.ndarray:
    """log softmax of the routing scores: log P(document | question)."""
    if not scores.size:
        return scores
    shifted = scores - scores.max()
    return shifted - np.log(np.exp(shifted).sum())
