"""Navigation of one question: route it to documents, walk their trees, join the sections it
refers to, and hand on page-localised passages with traversal statistics.

`explore` is the model-free part, step by step: routing (`route.py`), the walk of each
shortlisted document (`walk.py`), the references it and its selected text make
(`references.py`), and the walk's pages (`passages.py`), then the candidate pages the fitted
model ranks (`ranking/`). `navigate` ranks them and decides whether the documents answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from services.navigator.card_match import uncovered_years
from services.navigator.evidence import term_weights
from services.navigator.index import DocumentIndex
from services.navigator.models import NavigatorModels
from services.navigator.passages import (
    WalkPassages,
    named_passages_first,
    ranked_passages,
    visited_sections,
    walk_passages,
)
from services.navigator.ranking.features import (
    CandidateSet,
    DocumentEvidence,
    build_candidates,
)
from services.navigator.ranking.fused import FusedRanking, MissingWords, RankedPage, absent_share, rank
from services.navigator.ranking.model import RouterModel
from services.navigator.ranking.page_references import (
    PageRequest,
    missing_page_warning,
    named_first,
    page_request,
)
from services.navigator.ranking.rerank import rerank
from services.navigator.references import join_question_references, text_referenced
from services.navigator.resolver import Reference, find_references
from services.navigator.route import shortlist as route
from services.navigator.route_features import UNFITTED_ROUTER
from services.navigator.scoring import DocumentScores
from services.navigator.spelling import corrected_terms, respelled
from services.navigator.walk import Walker, choose_mode, selected_sections
from shared.adapters.logs import log_fields
from shared.model.query import (
    PATH_MAX_ENTRIES,
    NavigationResult,
    Passage,
    QuerySettings,
    TraversalStats,
    VisitedSection,
)
from shared.ports.model_calls import made_from
from shared.ports.model_roles import Embedder, NodeScorer
from shared.text.lexical import query_terms
from shared.text.names import bare_name, is_abbreviation, named_words, unmentioned_names
from shared.text.page_references import without_page_mentions
from shared.text.question import literals

logger = logging.getLogger(__name__)


# Below this probability that the documents answer, an answer is marked as weakly supported;
# so is one when most of what the question asks about (IDF-weighted) is on no page.
WEAK_EVIDENCE = 0.5
ABSENT_MAJORITY = 0.5
# At most this many passages per unit of beam width leave the navigator.
MAX_PASSAGES_PER_WIDTH = 2


@dataclass
class Exploration:
    """What the tree walk and the page index found for one question, before any fitted model
    orders it: the walk's passages, each document's evidence and the candidate pages."""

    question: str
    mode: str
    mode_reason: str
    walked: list[WalkPassages]  # each shortlisted document's walk, in routing order
    evidence: list[DocumentEvidence]
    candidates: CandidateSet | None
    missing: MissingWords  # what of the question no shortlisted document has
    stats: TraversalStats
    warnings: list[str]
    corrections: dict[str, str]
    path: list[VisitedSection]
    pages: PageRequest  # the pages the question names, per shortlisted document

    @cached_property
    def passages(self) -> list[Passage]:
        """The walk's passages (built on first use: the fused ranking builds its own)."""
        return [p for found in self.walked for p in found.passages()]


def explore(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    router: RouterModel | None = None,
    embedder: Embedder | None = None,
) -> Exploration:
    """Route (with `router`, the fitted model's; the unfitted rule without one), walk the trees
    (DFS or Beam), resolve references and collect candidate pages (their dense features by
    `embedder`; zeros without one)."""
    if not indexes:
        raise ValueError("navigate() needs at least one DocumentIndex; index a document first")
    qterms, corrections = corrected_terms(query_terms(question), indexes)
    routed = route(question, indexes, qterms, settings, router or UNFITTED_ROUTER, embedder)
    mode, reason = choose_mode(question, settings, routed.scores)
    stats = TraversalStats(documents_considered=len(indexes), documents_shortlisted=len(routed.scores))
    # The pages the question names, resolved in each shortlisted document; "Page Fourteen" is
    # where to look, not a name the documents must mention.
    pages = page_request(question, [s.index for s in routed.scores])
    asked = _Asked(question, qterms, routed.idf, literals(question), find_references(question), pages, mode)
    names, unmentioned, warnings = _question_warnings(question, indexes, routed.scores, pages)
    evidence: list[DocumentEvidence] = []
    path: list[VisitedSection] = []
    walked: list[WalkPassages] = []
    for scores, prior in zip(routed.scores, routed.log_prior, strict=True):
        document = _walk_document(asked, scores, prior, settings, scorer, stats, warnings)
        if document.evidence is not None:
            evidence.append(document.evidence)
        path += visited_sections(scores.index, document.reached, document.kept, PATH_MAX_ENTRIES - len(path))
        walked.append(document.found)
    spelled = respelled(question, corrections, indexes)
    candidates = build_candidates(spelled, evidence, asked.wanted, embedder) if evidence else None
    return Exploration(
        question=question, mode=mode, mode_reason=reason, walked=walked, evidence=evidence,
        candidates=candidates, missing=_missing_words(evidence, routed.scores, names, unmentioned),
        stats=stats, warnings=warnings, corrections=corrections, path=path, pages=pages,
    )


@dataclass(frozen=True)
class _Asked:
    """What one question brings to every shortlisted document's walk."""

    question: str
    qterms: list[str]
    idf: dict[str, float] | None  # corpus-wide IDF when routing over several documents
    wanted: tuple[str, ...]  # the literals the question quotes (`literals`)
    references: list[Reference]
    pages: PageRequest
    mode: str


@dataclass(frozen=True)
class _Walked:
    """One document's walk: its pages, its evidence for the fused ranking, and how each
    section was reached."""

    found: WalkPassages
    evidence: DocumentEvidence | None
    reached: dict[int, str]
    kept: set[int]


def _question_warnings(question: str, indexes: list[DocumentIndex], shortlist: list[DocumentScores],
                       pages: PageRequest) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """The question's names, those no document mentions, and the warnings about them, about the
    pages it names and about the periods it asks."""
    warnings: list[str] = []
    missing_pages = missing_page_warning(pages, [s.index for s in shortlist])
    if missing_pages:
        warnings.append(missing_pages)
    names = named_words(without_page_mentions(question))
    # Over every document asked, not only the shortlist: a name another document of the set
    # mentions is a routing miss, not evidence that the documents lack the question's subject.
    unmentioned = unmentioned_names(names, [(ix.vocabulary, _Groups(ix), ix.memo) for ix in indexes])
    if unmentioned:
        warnings.append(f"the documents never mention {', '.join(dict.fromkeys(map(bare_name, unmentioned)))}")
    uncovered = uncovered_years(indexes, question)
    if uncovered:
        warnings.append(f"no document reports {', '.join(map(str, uncovered))}: the answer may be of another period")
    return names, unmentioned, warnings


class _Groups(Mapping[str, list[str]]):
    """An index's vocabulary by initial, grouped when a look-up first needs it: a name found
    word for word in one document is never looked up fuzzily in the others."""

    def __init__(self, index: DocumentIndex) -> None:
        self._index = index

    def __getitem__(self, initial: str) -> list[str]:
        return self._index.vocabulary_by_initial[initial]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index.vocabulary_by_initial)

    def __len__(self) -> int:
        return len(self._index.vocabulary_by_initial)


def _walk_document(asked: _Asked, scores: DocumentScores, prior: float, settings: QuerySettings,
                   scorer: NodeScorer | None, stats: TraversalStats, warnings: list[str]) -> _Walked:
    index = scores.index
    weights = term_weights(index, asked.qterms, asked.idf)
    walker = Walker(asked.question, scores, settings, scorer)
    selected = selected_sections(walker, scores, settings, asked.mode, warnings)
    # How each section was reached, in the order it was: the walk first, then the rest.
    reached = dict.fromkeys(walker.entered, "walk")
    for i in selected:
        reached.setdefault(i, "recovery")
    pinned = join_question_references(index, asked.references, asked.pages, selected, reached, stats)
    found = walk_passages(scores, selected, settings, pinned, weights, asked.wanted)
    extra = text_referenced(scores, settings, found, asked.references, selected, reached, pinned, stats)
    if extra:
        found.add(walk_passages(scores, extra, settings, pinned, weights, asked.wanted))
    stats.nodes_visited += walker.visited
    stats.nodes_selected += len(selected) + len(extra)
    stats.scorer_fallbacks += walker.fallbacks
    evidence = _document_evidence(scores, settings, found, weights, prior) if index.has_pages else None
    return _Walked(found, evidence, reached, {*selected, *extra})


def _document_evidence(scores: DocumentScores, settings: QuerySettings, found: WalkPassages,
                       weights: dict[str, float], prior: float) -> DocumentEvidence:
    """What the fused ranking reads of one document: its pages' BM25, each node's probability,
    and the walk's pages with their scores."""
    probabilities = scores.probability_list(settings)
    if probabilities is None:
        probabilities = [scores.probability(i, settings) for i in range(len(scores.index.nodes))]
    tree_scores: dict[int, float] = {}
    for hit in sorted(found.pages, key=lambda hit: -hit.score):
        tree_scores.setdefault(hit.page, hit.score)
    return DocumentEvidence(
        index=scores.index, page_bm25=scores.page_raw, node_probability=np.asarray(probabilities),
        weights=weights, tree_pages=list(tree_scores), tree_scores=tree_scores, log_prior=prior,
    )


def _missing_words(evidence: list[DocumentEvidence], shortlist: list[DocumentScores],
                   names: list[tuple[str, str]], unmentioned: list[str]) -> MissingWords:
    name_count = len(names) or 1
    abbreviations = sum(is_abbreviation(word) for word in unmentioned)
    return MissingWords(
        terms=absent_share(evidence[0].weights, [s.index.vocabulary for s in shortlist]) if evidence else 0.0,
        names=(len(unmentioned) - abbreviations) / name_count,
        abbreviations=abbreviations / name_count,
    )


def fused_order(found: Exploration, settings: QuerySettings) -> bool:
    """True when the fused ranking, not the walk, orders the passages."""
    return found.candidates is not None and settings.ranking == "fused"


def _named_pages_first(ranking: FusedRanking, candidates: CandidateSet, request: PageRequest) -> FusedRanking:
    """The ranking with each document's named pages first among its pages, and answerable when
    a page the question names exists, or when a question about the document itself (its date,
    title, author) has a cover page on top: the reader said where the answer is, so the
    documents are not refused for it (the verifier still checks every sentence against its page)."""
    evidence = candidates.documents

    def key(ranked: RankedPage) -> tuple[str, int]:
        return evidence[ranked.document].index.doc_id, ranked.page

    pages = ranking.pages
    if request.found:
        order = named_first(pages, key, request)
        pages = [replace(pages[k], score=pages[place].score) for place, k in enumerate(order)]
    named_exists = any(request.named(*key(ranked)) for ranked in pages)
    cover_on_top = bool(pages) and (pages[0].document, pages[0].page) in candidates.prior_keys
    if not (named_exists or cover_on_top):
        return ranking
    return replace(ranking, pages=pages, answerable=True)


def navigate(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    *,
    models: NavigatorModels,
) -> NavigationResult:
    """Passages answering `question` from the given documents' trees.

    With several indexes, documents are routed first (lexical gates, at most
    `settings.max_documents`). The tree walk and BM25 propose pages; the fitted ranking model of
    `models` orders them (`settings.ranking == "fused"`) and decides whether the documents answer
    at all; its reranker, if any, then reorders the best pages and decides that again; its
    embedder gives the dense features. Whoever composes the stage loads `models` once and hands
    them in, so a query reads no settings and loads no model. Deterministic for a given input.
    """
    started = time.perf_counter()
    model, reranking = models.ranking, models.reranking
    with made_from(index.doc_id for index in indexes):  # a scorer model reads their sections
        found = explore(question, indexes, settings, scorer, model.router, models.embedder)
    stats, warnings = found.stats, found.warnings
    passages: list[Passage] | None = None  # the walk's own, unless the ranking decides otherwise
    if found.candidates is not None:
        ranking = rank(found.candidates, model, found.missing)
        if reranking is not None:
            ranking = rerank(ranking, found.candidates, reranking)
        stats.answer_probability = round(ranking.answer_probability, 4)
        ranking = _named_pages_first(ranking, found.candidates, found.pages)
        if ranking.answerable and ranking.answer_probability < WEAK_EVIDENCE:
            # Refusing a question the documents could answer costs more than a weak answer
            # marked weak: only strong evidence of absence refuses, the rest is labelled.
            warnings.append(
                f"weak evidence: the documents may not answer this (probability {ranking.answer_probability:.2f}); "
                "check the cited pages"
            )
        elif ranking.answerable and found.missing.terms > ABSENT_MAJORITY:
            warnings.append(
                f"weak evidence: most of what the question asks about is on no page ({found.missing.terms:.0%} of "
                "its weight); check the cited pages"
            )
        if not ranking.answerable:
            warnings.append(
                f"the documents are unlikely to answer this (probability {ranking.answer_probability:.2f}): "
                "not discussed in the documents"
            )
            passages = []
        elif settings.ranking == "fused":
            passages = ranked_passages(ranking, found.evidence, settings)
    # A term matched to a shorter form of itself (a stem) is no misspelling worth reporting.
    misspelt = {a: b for a, b in found.corrections.items() if not a.startswith(b)}
    if passages is None:
        passages = list(found.passages)
    if misspelt:
        warnings.append("read " + ", ".join(f"{a!r} as {b!r}" for a, b in misspelt.items()))
    if stats.scorer_fallbacks:
        warnings.append(f"node scoring by model failed {stats.scorer_fallbacks} time(s); lexical scores used")
    passages.sort(key=lambda p: (-p.score, p.doc_id, p.pages[0] if p.pages else 0, p.node_id))
    if not fused_order(found, settings):
        passages = named_passages_first(passages, found.pages)
    # The fused ranking hands over `context_pages` pages (the compressor fits them to the token
    # budget); the walk's own order is capped by the beam's width.
    fused = fused_order(found, settings)
    passages = passages[: settings.context_pages if fused else max(1, int(MAX_PASSAGES_PER_WIDTH * settings.beam_width))]
    stats.elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
    logger.debug(
        "navigated",
        extra=log_fields(mode=found.mode, visited=stats.nodes_visited, selected=stats.nodes_selected,
                         passages=len(passages), elapsed_ms=stats.elapsed_ms),
    )
    return NavigationResult(
        question=question, mode=found.mode, mode_reason=found.mode_reason, passages=passages, stats=stats,
        warnings=warnings, path=found.path,
    )
