"""Routing: the documents of a question's shortlist, each with log P(document | question).

Every document is scored lexically with one IDF over all of them; those passing the lexical
gates and close enough to the best routed one are kept, best first, at most
`settings.max_documents` (the routing features and the router's probabilities:
`route_features.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from services.navigator.index import DocumentIndex
from services.navigator.ranking.model import RouterModel
from services.navigator.route_features import log_probabilities, routing_matrix
from services.navigator.scoring import DocumentScores, Normaliser
from services.navigator.spelling import corrected_terms
from shared.model.query import QuerySettings
from shared.ports.model_roles import Embedder
from shared.text.lexical import query_terms, shared_idf

# VecTree-RAG's lexical gate: a document or section is relevant when its best BM25 reaches 1.0.
BM25_GATE = 1.0
# A shortlisted document must score at least this share of the best document.
ROUTING_RELATIVE_FLOOR = 0.3


@dataclass(frozen=True)
class Shortlist:
    """The routed documents' scores (normalised across them), best routed first."""

    scores: list[DocumentScores]
    idf: dict[str, float] | None  # one IDF over every document asked, when there are several
    log_prior: list[float]  # log P(document | question) of each; 0 for a lone document


def document_scores(
    indexes: list[DocumentIndex], qterms: list[str]
) -> tuple[list[DocumentScores], dict[str, float] | None]:
    """Every document's lexical scores, with one IDF over all of them when there are several."""
    idf = None
    if len(indexes) > 1:
        evidence = [ix.page_index for ix in indexes if ix.has_pages] or [ix.node_text_index for ix in indexes]
        idf = shared_idf(evidence, qterms)
    return [DocumentScores.compute(ix, qterms, idf) for ix in indexes], idf


def strength(s: DocumentScores) -> float:
    """The document's best page BM25 (best node text without pages)."""
    evidence = s.page_raw if s.index.has_pages else s.node_text_raw
    return float(evidence.max()) if evidence.size else 0.0


def document_features(question: str, indexes: list[DocumentIndex], router: RouterModel,
                      embedder: Embedder | None = None) -> np.ndarray:
    """The routing features (`router`'s columns) of every document for `question`, as routing
    computes them with `embedder`: what a router is fitted on."""
    qterms, _ = corrected_terms(query_terms(question), indexes)
    all_scores, _ = document_scores(indexes, qterms)
    return routing_matrix(question, indexes, qterms, [strength(s) for s in all_scores], router, embedder)


def shortlist(
    question: str, indexes: list[DocumentIndex], qterms: list[str], settings: QuerySettings, router: RouterModel,
    embedder: Embedder | None = None,
) -> Shortlist:
    """Score every document with a shared IDF; keep those passing the lexical gates, best
    routed first, with log P(document | question) of each kept one; then normalise the kept
    documents' scores by the best of them."""
    all_scores, idf = document_scores(indexes, qterms)
    if len(all_scores) == 1:
        kept, log_prior = all_scores, [0.0]
    else:
        routed = router.scores(routing_matrix(question, indexes, qterms, [strength(s) for s in all_scores], router,
                                              embedder))
        log_p = log_probabilities(routed)
        order = sorted(range(len(all_scores)), key=lambda k: (-routed[k], all_scores[k].index.doc_id))
        best = routed[order[0]]
        chosen = [k for k in order if _gated(all_scores[k]) and routed[k] >= ROUTING_RELATIVE_FLOOR * best]
        chosen = (chosen or order[:1])[: settings.max_documents]
        kept, log_prior = [all_scores[k] for k in chosen], [float(log_p[k]) for k in chosen]
    normaliser = _normaliser(kept)
    for s in kept:
        s.normalise(normaliser)
    return Shortlist(kept, idf, log_prior)


def _gated(s: DocumentScores) -> bool:
    section_gate = float(s.title_raw.max()) if s.title_raw.size else 0.0
    return strength(s) >= BM25_GATE or section_gate >= BM25_GATE


def _normaliser(scores: list[DocumentScores]) -> Normaliser:
    def best(values: list[float]) -> float:
        return max(values, default=0.0)

    return Normaliser(
        page=best([float(s.page_raw.max()) for s in scores if s.page_raw.size]),
        title=best([float(s.title_raw.max()) for s in scores if s.title_raw.size]),
        summary=best([float(s.summary_raw.max()) for s in scores if s.summary_raw.size]),
        node_text=best([float(s.node_text_raw.max()) for s in scores if s.node_text_raw.size]),
    )
