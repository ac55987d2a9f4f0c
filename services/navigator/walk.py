"""The tree walk of one document: DFS or Beam Search down its sections, and which of the two
a question gets.

A walker scores a level of candidate sections at a time (through the model scorer when one is
configured, in one call per level) and keeps those whose P(v|q) passes the threshold and that
hold any evidence. When no section passes, the walk is retried with half the threshold, then
falls back to the deepest sections holding the best pages.
"""

from __future__ import annotations

import logging
import re

from services.navigator.resolver import find_references
from services.navigator.scoring import DocumentScores
from shared.adapters.metrics import SCORER_FALLBACKS
from shared.model.query import QuerySettings
from shared.ports.model_roles import NodeScorer

logger = logging.getLogger(__name__)

# Questions that ask to compare, enumerate or combine spread their evidence: Beam Search.
_BROAD_CUES = re.compile(
    r"\b(compare|compared|comparison|difference|differences|differ|versus|vs\.?|both|between|"
    r"list|all|each|every|various|overview|summari[sz]e|main|across|and how|relationship)\b"
    r"|비교|차이|모든|各|比較|違い",
    re.IGNORECASE,
)


class Walker:
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


def _expand(walker: Walker, i: int, threshold: float, limit: int) -> tuple[bool, list[tuple[float, int]]]:
    """Enter node `i`: whether it is selected itself (a leaf, at the depth limit, no child
    passing the bar, or its own pages beat its children's), and its children that pass."""
    walker.enter(i)
    flat = walker.scores.index.nodes[i]
    if flat.depth >= walker.settings.max_depth or not flat.children:
        return True, []
    children = walker.passing(walker.rank(list(flat.children)), threshold, limit)
    return not children or walker.own_pages_beat_children(i), children


def dfs(walker: Walker, settings: QuerySettings, threshold: float) -> dict[int, float]:
    index = walker.scores.index
    selected: dict[int, float] = {}
    roots = walker.passing(walker.rank(index.roots), threshold, settings.max_branches)
    stack = list(reversed(roots))  # best on top
    while stack:
        p, i = stack.pop()
        keep, children = _expand(walker, i, threshold, settings.max_branches)
        if keep:
            selected[i] = p
        stack.extend(reversed(children))
    return selected


def beam(walker: Walker, settings: QuerySettings, threshold: float) -> dict[int, float]:
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
            keep, kids = _expand(walker, i, threshold, settings.beam_width)
            if keep:
                pool[i] = p
            candidates.extend(k for _, k in kids)
        # Re-rank the whole level together: the beam keeps the best nodes across parents.
        ranked = [(walker.scores.probability(i, settings), i) for i in candidates]
        ranked.sort(key=lambda item: (-item[0], item[1]))
        frontier = ranked[: settings.beam_width]
    best = sorted(pool.items(), key=lambda item: (-item[1], item[0]))[: settings.beam_width]
    return dict(best)


def choose_mode(question: str, settings: QuerySettings, scores: list[DocumentScores]) -> tuple[str, str]:
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


def fallback_selection(scores: DocumentScores, settings: QuerySettings) -> dict[int, float]:
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


def selected_sections(walker: Walker, scores: DocumentScores, settings: QuerySettings, mode: str,
                       warnings: list[str]) -> dict[int, float]:
    """The walk's sections (DFS or Beam), with the over-filtering recovery: a lower bar first,
    then the best pages themselves."""
    strategy = dfs if mode == "dfs" else beam
    selected = strategy(walker, settings, settings.score_threshold)
    if not selected and settings.score_threshold > 0:
        selected = strategy(walker, settings, settings.score_threshold / 2)
        if not selected:
            selected = fallback_selection(scores, settings)
        if selected:
            warnings.append(
                f"{scores.index.label}: no section reached the score threshold {settings.score_threshold}; "
                "recovered with a lower one"
            )
    return selected
