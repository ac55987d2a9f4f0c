"""Tree navigation: route a question to documents, walk their trees (DFS or Beam Search),
resolve cross-references, and return page-localised passages with traversal statistics.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

import numpy as np

from services.navigator.card_match import uncovered_years
from services.navigator.evidence import (
    CANDIDATES_PER_NODE,
    page_fields,
    rerank_pages,
    term_weights,
)
from services.navigator.index import DocumentIndex
from services.navigator.ranking.features import (
    CandidateSet,
    DocumentEvidence,
    build_candidates,
)
from services.navigator.ranking.fused import FusedRanking, MissingWords, RankedPage, absent_share, rank
from services.navigator.ranking.model import RankingModel, RouterModel, shipped_model
from services.navigator.ranking.page_references import (
    PageRequest,
    missing_page_warning,
    named_first,
    page_request,
)
from services.navigator.ranking.rerank import Reranking, configured_reranking, rerank
from services.navigator.resolver import (
    Reference,
    find_references,
    find_text_references,
    resolve,
)
from services.navigator.routing import UNFITTED_ROUTER, log_probabilities, routing_matrix
from services.navigator.scoring import DocumentScores, Normaliser
from services.navigator.spelling import corrected_terms, respelled
from shared.adapters.logs import log_fields
from shared.adapters.metrics import SCORER_FALLBACKS
from shared.model.query import (
    FILE_LABEL_MAX_CHARS,
    PATH_MAX_ENTRIES,
    SECTION_TITLE_MAX_CHARS,
    NavigationResult,
    Passage,
    QuerySettings,
    TraversalStats,
    VisitedSection,
)
from shared.ports.model_roles import NodeScorer
from shared.text.lexical import query_terms, shared_idf
from shared.text.names import bare_name, is_abbreviation, named_words, unmentioned_names
from shared.text.page_references import without_page_mentions
from shared.text.question import literals

logger = logging.getLogger(__name__)

class ConfiguredReranker:
    """Stands for the reranker `TREERAG_RERANKER` names, read when `navigate` is called without one."""


CONFIGURED_RERANKER = ConfiguredReranker()
# Below this probability that the documents answer, an answer is marked as weakly supported;
# so is one when most of what the question asks about (IDF-weighted) is on no page.
WEAK_EVIDENCE = 0.5
ABSENT_MAJORITY = 0.5
# VecTree-RAG's lexical gate: a document or section is relevant when its best BM25 reaches 1.0.
BM25_GATE = 1.0
# A shortlisted document must score at least this share of the best document.
ROUTING_RELATIVE_FLOOR = 0.3
# Questions that ask to compare, enumerate or combine spread their evidence: Beam Search.
_BROAD_CUES = re.compile(
    r"\b(compare|compared|comparison|difference|differences|differ|versus|vs\.?|both|between|"
    r"list|all|each|every|various|overview|summari[sz]e|main|across|and how|relationship)\b"
    r"|비교|차이|모든|各|比較|違い",
    re.IGNORECASE,
)
# A passage's rank score: this share from its page's own lexical score, the rest from the
# node's P(v|q).
PAGE_SHARE = 0.5
# A node's page is kept when its evidence reaches this share of the node's best page.
EVIDENCE_SHARE = 0.5
# At most this many passages per unit of beam width leave the navigator.
MAX_PASSAGES_PER_WIDTH = 2
# References found in selected text add at most this many nodes.
MAX_TEXT_REFERENCES = 3


class _Walker:
    """Scores candidates (optionally through a model scorer) while walking one document."""

    def __init__(
        self, question: str, scores: DocumentScores, settings: QuerySettings, scorer: NodeScorer | None
    ) -> None:
        self.question = question
        self.scores = scores
        self.settings = settings
        self.scorer = scorer
        self.visited = 0
        self.fallbacks = 0
        self.entered: dict[int, None] = {}  # nodes the walk entered, in order (a dict: ordered and unique)
        self._asked: set[int] = set()  # nodes the model has scored (or failed to) already

    def prefetch(self, candidates: list[int]) -> None:
        """Score every candidate not scored yet in ONE model call (a whole level of a beam)."""
        if self.scorer is None:
            return
        fresh = [i for i in dict.fromkeys(candidates) if i not in self._asked]
        if not fresh:
            return
        self._asked.update(fresh)
        nodes = self.scores.index.nodes
        pairs = [(nodes[i].node.title, nodes[i].node.summary) for i in fresh]
        try:
            model = self.scorer.score(self.question, pairs)
        except Exception:  # a failing model must never fail the query
            logger.warning("node scorer raised; using lexical scores", exc_info=True)
            model = None
        if model is None or len(model) != len(fresh):
            self.fallbacks += 1
            SCORER_FALLBACKS.inc()
            return
        for i, value in zip(fresh, model, strict=True):
            self.scores.model_scores[i] = min(1.0, max(0.0, float(value)))

    def enter(self, i: int) -> None:
        self.entered.setdefault(i, None)

    def rank(self, candidates: list[int]) -> list[tuple[float, int]]:
        """(P, node) for candidates, best first; ties keep tree order (deterministic)."""
        if not candidates:
            return []
        self.visited += len(candidates)
        self.prefetch(candidates)
        values = self.scores.probability_list(self.settings)
        if values is None:
            ranked = [(self.scores.probability(i, self.settings), i) for i in candidates]
        else:
            ranked = [(values[i], i) for i in candidates]
        ranked.sort(key=lambda item: (-item[0], item[1]))
        return ranked

    def passing(self, ranked: list[tuple[float, int]], threshold: float, limit: int) -> list[tuple[float, int]]:
        # A node with no lexical or model evidence never passes, whatever its depth prior.
        has_evidence = self.scores.has_evidence
        return [(p, i) for p, i in ranked if p >= threshold and has_evidence(i)][:limit]

    def own_pages_beat_children(self, i: int) -> bool:
        """True when the node's own pages (before its first child) hold better evidence than
        any child, so the node itself is evidence, not only a route to its children."""
        index = self.scores.index
        flat = index.nodes[i]
        if not flat.children:
            return False
        if not index.has_pages:
            # Without page text, the node's own title and summary play the part of its pages.
            own_text = float(self.scores.node_text[i])
            return own_text > 0 and own_text >= max(float(self.scores.node_text[c]) for c in flat.children)
        return self.scores.own_pages_beat_children(i)


def _dfs(walker: _Walker, settings: QuerySettings, threshold: float) -> dict[int, float]:
    index = walker.scores.index
    selected: dict[int, float] = {}
    roots = walker.passing(walker.rank(index.roots), threshold, settings.max_branches)
    stack = list(reversed(roots))  # best on top
    while stack:
        p, i = stack.pop()
        walker.enter(i)
        flat = index.nodes[i]
        if flat.depth >= settings.max_depth or not flat.children:
            selected[i] = p
            continue
        children = walker.passing(walker.rank(list(flat.children)), threshold, settings.max_branches)
        if not children or walker.own_pages_beat_children(i):
            selected[i] = p
        stack.extend(reversed(children))
    return selected


def _beam(walker: _Walker, settings: QuerySettings, threshold: float) -> dict[int, float]:
    index = walker.scores.index
    frontier = walker.passing(walker.rank(index.roots), threshold, settings.beam_width)
    pool: dict[int, float] = {}
    while frontier:
        # One model call for the children of the whole frontier, not one per parent.
        walker.prefetch([
            child for _, i in frontier
            if index.nodes[i].depth < settings.max_depth
            for child in index.nodes[i].children
        ])
        candidates: list[int] = []
        for p, i in frontier:
            walker.enter(i)
            flat = index.nodes[i]
            if flat.depth >= settings.max_depth or not flat.children:
                pool[i] = p
                continue
            kids = walker.passing(walker.rank(list(flat.children)), threshold, settings.beam_width)
            if not kids or walker.own_pages_beat_children(i):
                pool[i] = p
            candidates.extend(k for _, k in kids)
        # Re-rank the whole level together: the beam keeps the best nodes across parents.
        ranked = [(walker.scores.probability(i, settings), i) for i in candidates]
        ranked.sort(key=lambda item: (-item[0], item[1]))
        frontier = ranked[: settings.beam_width]
    best = sorted(pool.items(), key=lambda item: (-item[1], item[0]))[: settings.beam_width]
    return dict(best)


def _choose_mode(question: str, settings: QuerySettings, scores: list[DocumentScores]) -> tuple[str, str]:
    if settings.mode != "auto":
        return settings.mode, "requested"
    if find_references(question):
        return "dfs", "the question names a section: a focused walk"
    if _BROAD_CUES.search(question):
        return "beam", "the question compares or enumerates: a wider beam"
    top_level = sorted(
        (s.semantic(r) for s in scores for r in s.index.roots), reverse=True
    )
    if len(top_level) >= 2 and top_level[0] > 0 and top_level[1] >= 0.8 * top_level[0]:
        return "beam", "evidence is spread over several top-level sections"
    return "dfs", "one top-level section dominates"


def _document_scores(
    indexes: list[DocumentIndex], qterms: list[str]
) -> tuple[list[DocumentScores], dict[str, float] | None]:
    """Every document's lexical scores, with one IDF over all of them when there are several."""
    idf = None
    if len(indexes) > 1:
        evidence = [ix.page_index for ix in indexes if ix.has_pages] or [ix.node_text_index for ix in indexes]
        idf = shared_idf(evidence, qterms)
    return [DocumentScores.compute(ix, qterms, idf) for ix in indexes], idf


def _strength(s: DocumentScores) -> float:
    """The document's best page BM25 (best node text without pages)."""
    evidence = s.page_raw if s.index.has_pages else s.node_text_raw
    return float(evidence.max()) if evidence.size else 0.0


def document_features(question: str, indexes: list[DocumentIndex], router: RouterModel) -> np.ndarray:
    """The routing features (`router`'s columns) of every document for `question`, as routing
    computes them: what a router is fitted on."""
    qterms, _ = corrected_terms(query_terms(question), indexes)
    all_scores, _ = _document_scores(indexes, qterms)
    return routing_matrix(question, indexes, qterms, [_strength(s) for s in all_scores], router)


def _route(
    question: str, indexes: list[DocumentIndex], qterms: list[str], settings: QuerySettings, router: RouterModel
) -> tuple[list[DocumentScores], dict[str, float] | None, list[float]]:
    """Score every document with a shared IDF; keep those passing the lexical gates, best
    routed first, with log P(document | question) of each kept one."""
    all_scores, idf = _document_scores(indexes, qterms)
    if len(all_scores) == 1:
        return all_scores, idf, [0.0]

    def gated(s: DocumentScores) -> bool:
        section_gate = float(s.title_raw.max()) if s.title_raw.size else 0.0
        return _strength(s) >= BM25_GATE or section_gate >= BM25_GATE

    routed = router.scores(routing_matrix(question, indexes, qterms, [_strength(s) for s in all_scores], router))
    log_p = log_probabilities(routed)
    order = sorted(range(len(all_scores)), key=lambda k: (-routed[k], all_scores[k].index.doc_id))
    best = routed[order[0]]
    kept = [k for k in order if gated(all_scores[k]) and routed[k] >= ROUTING_RELATIVE_FLOOR * best]
    kept = (kept or order[:1])[: settings.max_documents]
    return [all_scores[k] for k in kept], idf, [float(log_p[k]) for k in kept]


def _normaliser(scores: list[DocumentScores]) -> Normaliser:
    def best(values: list[float]) -> float:
        return max(values, default=0.0)

    return Normaliser(
        page=best([float(s.page_raw.max()) for s in scores if s.page_raw.size]),
        title=best([float(s.title_raw.max()) for s in scores if s.title_raw.size]),
        summary=best([float(s.summary_raw.max()) for s in scores if s.summary_raw.size]),
        node_text=best([float(s.node_text_raw.max()) for s in scores if s.node_text_raw.size]),
    )


def _fallback_selection(scores: DocumentScores, settings: QuerySettings) -> dict[int, float]:
    """Over-filtering recovery: the deepest nodes holding the best pages (or best node text)."""
    index = scores.index
    chosen: dict[int, float] = {}
    if index.has_pages and scores.page.size and scores.page.max() > 0:
        for page in scores.page.argsort(kind="stable")[::-1][: settings.max_branches]:
            if scores.page[page] <= 0:
                break
            node = int(index.page_to_deepest[page])
            if node >= 0:
                chosen.setdefault(node, scores.probability(node, settings))
    elif scores.node_text.size and scores.node_text.max() > 0:
        for node in scores.node_text.argsort(kind="stable")[::-1][: settings.max_branches]:
            if scores.node_text[node] > 0:
                chosen[int(node)] = scores.probability(int(node), settings)
    return chosen


# Windows up to this many pages are ranked in plain Python (cheaper than numpy's call overhead).
_SMALL_WINDOW = 24


def _candidate_pages(scores: DocumentScores, nodes: list[int]) -> dict[int, list[int]]:
    """Each node's strongest pages by BM25 (1-based; ties in page order), its first page if
    none mentions a term."""
    index = scores.index
    n_pages = len(index.pages)
    out: dict[int, list[int]] = {}
    for i in nodes:
        node = index.nodes[i].node
        start, stop = node.page_start - 1, min(node.page_end, n_pages)
        if stop <= start:
            out[i] = [node.page_start]
            continue
        if stop - start <= _SMALL_WINDOW:
            window = scores.page[start:stop].tolist()
            # A stable sort on the negated score: ties stay in page order.
            order = sorted((k for k in range(len(window)) if window[k] > 0), key=lambda k: -window[k])
            found = [start + k + 1 for k in order[:CANDIDATES_PER_NODE]]
        else:
            array = scores.page[start:stop]
            ranked = np.argsort(-array, kind="stable")[:CANDIDATES_PER_NODE]
            found = [start + int(k) + 1 for k in ranked if array[k] > 0]
        out[i] = found or [node.page_start]
    return out


def _passages_for(
    scores: DocumentScores,
    selected: dict[int, float],
    settings: QuerySettings,
    pinned_pages: dict[int, int],
    weights: dict[str, float],
    wanted_literals: tuple[str, ...] = (),
) -> list[Passage]:
    index = scores.index
    # page -> (rounded score, node) of the best node citing it; Passages are built once, at the end.
    by_page: dict[int, tuple[float, int]] = {}
    node_only: list[Passage] = []
    if index.has_pages:
        candidates = _candidate_pages(scores, list(selected))
        evidence = rerank_pages(
            index, sorted({p for ps in candidates.values() for p in ps}), scores.page, weights, wanted_literals
        )
    for i, p in selected.items():
        node = index.nodes[i].node
        if not index.has_pages:
            text = f"{node.title}. {node.summary}".strip() if node.summary else node.title
            node_only.append(
                Passage(doc_id=index.doc_id, file_name=index.label, node_id=node.id, title=node.title,
                        pages=[node.page_start], text=text, score=round(p, 6))
            )
            continue
        ranked = sorted(candidates[i], key=lambda page: (-evidence[page], page))
        top = evidence[ranked[0]]
        # Pages far weaker than the node's best add tokens, not evidence.
        pages = [page for page in ranked if evidence[page] >= EVIDENCE_SHARE * top][: settings.pages_per_node]
        if i in pinned_pages and pinned_pages[i] not in pages:
            pages = [pinned_pages[i], *pages][: settings.pages_per_node]
        for page in pages:
            # The page's own evidence ranks it; the node's P breaks near-ties.
            score = PAGE_SHARE * evidence.get(page, 0.0) + (1 - PAGE_SHARE) * p
            current = by_page.get(page)
            if current is None or score > current[0]:
                by_page[page] = (round(score, 6), i)
    page_passages = []
    for page, (score, i) in by_page.items():
        node = index.nodes[i].node
        page_passages.append(Passage(
            doc_id=index.doc_id, file_name=index.label, node_id=node.id, title=node.title,
            pages=[page], text=index.pages[page - 1], score=score,
        ))
    return page_passages + node_only


def _text_references(index: DocumentIndex, passage: Passage) -> list[Reference]:
    """Cross-references made by a passage's text; a page's are found once per index."""
    if index.has_pages and len(passage.pages) == 1 and passage.text == index.pages[passage.pages[0] - 1]:
        return page_fields(index).text_references(passage.pages[0])
    return find_text_references(passage.text)


def _ranked_passages(ranking: FusedRanking, evidence: list[DocumentEvidence], settings: QuerySettings) -> list[Passage]:
    """The model's best pages as passages, each in the deepest section holding it."""
    passages = []
    for ranked in ranking.pages[: settings.context_pages]:
        index = evidence[ranked.document].index
        deepest = int(index.page_to_deepest[ranked.page - 1])
        node = index.nodes[deepest].node if deepest >= 0 else None
        passages.append(Passage(
            doc_id=index.doc_id, file_name=index.label, node_id=node.id if node else f"page-{ranked.page}",
            title=node.title if node else "", pages=[ranked.page], text=index.pages[ranked.page - 1],
            score=round(ranked.score, 6),
        ))
    return passages


def _visited_sections(
    index: DocumentIndex, reached: dict[int, str], selected: set[int], room: int
) -> list[VisitedSection]:
    """The sections of one document the navigator reached (node -> how, in order), at most `room`."""
    path = []
    for i, via in list(reached.items())[: max(0, room)]:
        node = index.nodes[i].node
        path.append(VisitedSection(
            doc_id=index.doc_id, file_name=index.label[:FILE_LABEL_MAX_CHARS], node_id=node.id,
            title=node.title[:SECTION_TITLE_MAX_CHARS],
            page_start=node.page_start, page_end=node.page_end, selected=i in selected, via=via,
        ))
    return path


@dataclass
class Exploration:
    """What the tree walk and the page index found for one question, before any fitted model
    orders it: the walk's passages, each document's evidence and the candidate pages."""

    question: str
    mode: str
    mode_reason: str
    passages: list[Passage]
    evidence: list[DocumentEvidence]
    candidates: CandidateSet | None
    missing: MissingWords  # what of the question no shortlisted document has
    stats: TraversalStats
    warnings: list[str]
    corrections: dict[str, str]
    path: list[VisitedSection]
    pages: PageRequest  # the pages the question names, per shortlisted document


def explore(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    router: RouterModel | None = None,
) -> Exploration:
    """Route (with `router`, the fitted model's; the unfitted rule without one), walk the trees
    (DFS or Beam), resolve references and collect candidate pages."""
    if not indexes:
        raise ValueError("navigate() needs at least one DocumentIndex; index a document first")
    qterms, corrections = corrected_terms(query_terms(question), indexes)
    shortlist, idf, log_prior = _route(question, indexes, qterms, settings, router or UNFITTED_ROUTER)
    normaliser = _normaliser(shortlist)
    for s in shortlist:
        s.normalise(normaliser)
    mode, reason = _choose_mode(question, settings, shortlist)
    stats = TraversalStats(documents_considered=len(indexes), documents_shortlisted=len(shortlist))
    # The pages the question names, resolved in each shortlisted document; "Page Fourteen" is
    # where to look, not a name the documents must mention.
    pages = page_request(question, [s.index for s in shortlist])
    asked = _Asked(question, qterms, idf, literals(question), find_references(question), pages, mode)
    names, unmentioned, warnings = _question_warnings(question, indexes, shortlist, pages)
    evidence: list[DocumentEvidence] = []
    path: list[VisitedSection] = []
    passages: list[Passage] = []
    for scores, prior in zip(shortlist, log_prior, strict=True):
        walked = _walk_document(asked, scores, prior, settings, scorer, stats, warnings)
        if walked.evidence is not None:
            evidence.append(walked.evidence)
        path += _visited_sections(scores.index, walked.reached, walked.kept, PATH_MAX_ENTRIES - len(path))
        passages.extend(walked.passages)
    spelled = respelled(question, corrections, indexes)
    candidates = build_candidates(spelled, evidence, asked.wanted) if evidence else None
    return Exploration(
        question=question, mode=mode, mode_reason=reason, passages=passages, evidence=evidence,
        candidates=candidates, missing=_missing_words(evidence, shortlist, names, unmentioned),
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
    """One document's walk: its passages, its evidence for the fused ranking, and how each
    section was reached."""

    passages: list[Passage]
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


def _selected_sections(walker: _Walker, scores: DocumentScores, settings: QuerySettings, mode: str,
                       warnings: list[str]) -> dict[int, float]:
    """The walk's sections (DFS or Beam), with the over-filtering recovery: a lower bar first,
    then the best pages themselves."""
    strategy = _dfs if mode == "dfs" else _beam
    selected = strategy(walker, settings, settings.score_threshold)
    if not selected and settings.score_threshold > 0:
        selected = strategy(walker, settings, settings.score_threshold / 2)
        if not selected:
            selected = _fallback_selection(scores, settings)
        if selected:
            warnings.append(
                f"{scores.index.label}: no section reached the score threshold {settings.score_threshold}; "
                "recovered with a lower one"
            )
    return selected


def _walk_document(asked: _Asked, scores: DocumentScores, prior: float, settings: QuerySettings,
                   scorer: NodeScorer | None, stats: TraversalStats, warnings: list[str]) -> _Walked:
    index = scores.index
    weights = term_weights(index, asked.qterms, asked.idf)
    walker = _Walker(asked.question, scores, settings, scorer)
    selected = _selected_sections(walker, scores, settings, asked.mode, warnings)
    # How each section was reached, in the order it was: the walk first, then the rest.
    reached = dict.fromkeys(walker.entered, "walk")
    for i in selected:
        reached.setdefault(i, "recovery")
    pinned: dict[int, int] = {}
    top = max(selected.values(), default=0.0)
    for ref in resolve(index, asked.references):
        reached.setdefault(ref.node, "reference")
        selected[ref.node] = max(selected.get(ref.node, 0.0), top)
        if ref.page is not None:
            pinned[ref.node] = ref.page
        stats.references_resolved += 1
    # A page the question names joins the walk as a cross-reference's page does.
    for page in asked.pages.by_document.get(index.doc_id, ()):
        node = int(index.page_to_deepest[page - 1])
        if node >= 0:
            reached.setdefault(node, "reference")
            selected[node] = max(selected.get(node, 0.0), top)
            pinned[node] = page
            stats.references_resolved += 1
    doc_passages = _passages_for(scores, selected, settings, pinned, weights, asked.wanted)
    extra = _text_referenced(asked, scores, settings, doc_passages, selected, reached, pinned, stats)
    if extra:
        known = {(p.doc_id, tuple(p.pages)) for p in doc_passages}
        doc_passages += [
            p for p in _passages_for(scores, extra, settings, pinned, weights, asked.wanted)
            if (p.doc_id, tuple(p.pages)) not in known
        ]
    stats.nodes_visited += walker.visited
    stats.nodes_selected += len(selected) + len(extra)
    stats.scorer_fallbacks += walker.fallbacks
    evidence = _document_evidence(scores, settings, doc_passages, weights, prior) if index.has_pages else None
    return _Walked(doc_passages, evidence, reached, {*selected, *extra})


def _text_referenced(asked: _Asked, scores: DocumentScores, settings: QuerySettings, doc_passages: list[Passage],
                     selected: dict[int, float], reached: dict[int, str], pinned: dict[int, int],
                     stats: TraversalStats) -> dict[int, float]:
    """The sections the selected text itself names ("see Section 4.2"), not selected already."""
    strongest = sorted(doc_passages, key=lambda p: -p.score)[:MAX_TEXT_REFERENCES]
    text_refs = [r for p in strongest for r in _text_references(scores.index, p) if r not in asked.references]
    extra: dict[int, float] = {}
    for ref in resolve(scores.index, list(dict.fromkeys(text_refs))[:MAX_TEXT_REFERENCES]):
        if ref.node not in selected:
            reached.setdefault(ref.node, "reference")
            extra[ref.node] = 0.5 * scores.probability(ref.node, settings)
            if ref.page is not None:
                pinned[ref.node] = ref.page
            stats.references_resolved += 1
    return extra


def _document_evidence(scores: DocumentScores, settings: QuerySettings, doc_passages: list[Passage],
                       weights: dict[str, float], prior: float) -> DocumentEvidence:
    """What the fused ranking reads of one document: its pages' BM25, each node's probability,
    and the walk's pages with their scores."""
    probabilities = scores.probability_list(settings)
    if probabilities is None:
        probabilities = [scores.probability(i, settings) for i in range(len(scores.index.nodes))]
    walked = sorted((p for p in doc_passages if p.pages), key=lambda p: -p.score)
    tree_scores: dict[int, float] = {}
    for p in walked:
        tree_scores.setdefault(p.pages[0], p.score)
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


def _named_passages_first(passages: list[Passage], request: PageRequest) -> list[Passage]:
    """The walk's passages (best first) with each document's named pages first among its own."""
    if not request.found:
        return passages
    order = named_first(passages, lambda p: (p.doc_id, p.pages[0] if p.pages else 0), request)
    return [passages[k].model_copy(update={"score": passages[place].score}) for place, k in enumerate(order)]


def navigate(
    question: str,
    indexes: list[DocumentIndex],
    settings: QuerySettings,
    scorer: NodeScorer | None = None,
    model: RankingModel | None = None,
    reranking: Reranking | None | ConfiguredReranker = CONFIGURED_RERANKER,
) -> NavigationResult:
    """Passages answering `question` from the given documents' trees.

    With several indexes, documents are routed first (lexical gates, at most
    `settings.max_documents`). The tree walk and BM25 propose pages; the fitted `model` (the
    shipped `ranking/model.json` by default) orders them (`settings.ranking == "fused"`) and
    decides whether the documents answer at all; `reranking` (by default the configured
    `TREERAG_RERANKER`, if any; None: none) then reorders its best pages and decides that again.
    The stages hand their models in (`NavigatorModels`), so a query reads no settings.
    Deterministic for a given input.
    """
    started = time.perf_counter()
    model = model or shipped_model()
    found = explore(question, indexes, settings, scorer, model.router)
    stats, warnings, passages = found.stats, found.warnings, found.passages
    if found.candidates is not None:
        ranking = rank(found.candidates, model, found.missing)
        if isinstance(reranking, ConfiguredReranker):
            reranking = configured_reranking()
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
            passages = _ranked_passages(ranking, found.evidence, settings)
    # A term matched to a shorter form of itself (a stem) is no misspelling worth reporting.
    misspelt = {a: b for a, b in found.corrections.items() if not a.startswith(b)}
    if misspelt:
        warnings.append("read " + ", ".join(f"{a!r} as {b!r}" for a, b in misspelt.items()))
    if stats.scorer_fallbacks:
        warnings.append(f"node scoring by model failed {stats.scorer_fallbacks} time(s); lexical scores used")
    passages.sort(key=lambda p: (-p.score, p.doc_id, p.pages[0] if p.pages else 0, p.node_id))
    if not fused_order(found, settings):
        passages = _named_passages_first(passages, found.pages)
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
