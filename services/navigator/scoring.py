"""Node relevance for one question over one document: P(v|q) = w_sem·semantic +
w_struct·structural + w_ctx·contextual (weights from QuerySettings, 0.7/0.2/0.1 by default).

- semantic: lexical relevance (BM25) of the question to the node's own pages (the best page in
  its range), its title and its summary, each normalised by the best score across every
  document of the query, so nodes of different documents compare;
- structural: a depth prior (deeper nodes are more specific, shallow ones broader);
- contextual: the semantic relevance of the node's ancestors (the parent path).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from services.navigator.index import DocumentIndex
from shared.model.query import QuerySettings

# Share of the semantic score given to each field, when the field exists.
PAGE_WEIGHT = 0.6
TITLE_WEIGHT = 0.25
SUMMARY_WEIGHT = 0.15


def structural_prior(depth: int) -> float:
    return 1.0 / (1.0 + 0.25 * (depth - 1))


@dataclass
class Normaliser:
    """Best raw score per field over every document of the query (for 0..1 scaling)."""

    page: float = 0.0
    title: float = 0.0
    summary: float = 0.0
    node_text: float = 0.0


def _scale(raw: np.ndarray, best: float) -> np.ndarray:
    return raw / best if best > 0 else np.zeros_like(raw)


@dataclass
class DocumentScores:
    """Raw and scaled lexical scores of one document for one question, plus a node cache."""

    index: DocumentIndex
    qterms: list[str]
    page_raw: np.ndarray
    title_raw: np.ndarray
    summary_raw: np.ndarray
    node_text_raw: np.ndarray
    page: np.ndarray = field(init=False)
    title: np.ndarray = field(init=False)
    summary: np.ndarray = field(init=False)
    node_text: np.ndarray = field(init=False)
    document_relevance: float = 0.0
    _semantic: dict[int, float] = field(default_factory=dict)
    _subtree_text: np.ndarray | None = None
    _page_best: np.ndarray = field(default_factory=lambda: np.zeros(0))
    _lexical: np.ndarray = field(default_factory=lambda: np.zeros(0))
    _context: np.ndarray = field(default_factory=lambda: np.zeros(0))
    model_scores: dict[int, float] = field(default_factory=dict)
    # P(v|q) of every node for one set of weights (lexical scores only), computed on first use.
    _probabilities: tuple[tuple[float, float, float], np.ndarray, list[float]] | None = None
    # Nodes with lexical evidence (semantic > 0 without a model), as plain booleans for the walk.
    _has_evidence: list[bool] = field(default_factory=list)
    # Per node: its own pages (before its first child) beat every child's best page.
    _own_beats_children: list[bool] | None = None

    @classmethod
    def compute(cls, index: DocumentIndex, qterms: list[str], idf: dict[str, float] | None) -> DocumentScores:
        page, title, summary, node_text = index.field_scores(qterms, idf)
        return cls(
            index=index, qterms=qterms, page_raw=page, title_raw=title, summary_raw=summary, node_text_raw=node_text
        )

    def normalise(self, best: Normaliser) -> None:
        """Scale every field by the best score across the query's documents, then score every
        node at once (vectorised): lexical semantic and the ancestors' mean (contextual)."""
        self.page = _scale(self.page_raw, best.page)
        self.title = _scale(self.title_raw, best.title)
        self.summary = _scale(self.summary_raw, best.summary)
        self.node_text = _scale(self.node_text_raw, best.node_text)
        if self.index.has_pages:
            self.document_relevance = float(self.page.max()) if self.page.size else 0.0
        else:
            self.document_relevance = float(self.node_text.max()) if self.node_text.size else 0.0
        self._semantic.clear()
        arrays = self.index.arrays
        if self.index.has_pages:
            evidence = arrays.page_range_max(self.page)
        else:
            evidence = np.array([self.subtree_text(i) for i in range(len(self.index.nodes))])
        self._page_best = evidence if self.index.has_pages else np.zeros(len(self.index.nodes))
        weights = [(PAGE_WEIGHT, evidence), (TITLE_WEIGHT, self.title)]
        if self.index.has_summaries:
            weights.append((SUMMARY_WEIGHT, self.summary))
        total = sum(w for w, _ in weights)
        self._lexical = np.asarray(sum(w * a for w, a in weights) / total) if len(self.index.nodes) else np.zeros(0)
        # Mean lexical score of each node's ancestors, level by level (parents come first).
        ancestor_sum = np.zeros(len(self.index.nodes))
        for rows, parents in arrays.levels:
            ancestor_sum[rows] = ancestor_sum[parents] + self._lexical[parents]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = ancestor_sum / np.maximum(arrays.depth - 1, 1)
        self._context = np.where(arrays.depth > 1, mean, self.document_relevance)
        self._probabilities = None
        self._has_evidence = (self._lexical > 0).tolist()
        self._own_beats_children = None

    def own_pages_beat_children(self, i: int) -> bool:
        """True when node i has children and its own pages (before the first child) hold a
        better page than any child's best; every node at once, on first use (with page text)."""
        if self._own_beats_children is None:
            arrays = self.index.arrays
            beats = np.zeros(len(self.index.nodes), dtype=bool)
            parents = arrays.parents_with_children
            if parents.size:
                n_pages = len(self.page)
                starts, stops = arrays.own_starts, arrays.own_stops
                valid = (stops > starts) & (starts < n_pages)
                own = np.zeros(parents.size)
                if valid.any():
                    bounds = np.empty(2 * int(valid.sum()), dtype=np.int64)
                    bounds[0::2] = starts[valid]
                    bounds[1::2] = stops[valid]
                    own[valid] = np.maximum.reduceat(np.append(self.page, 0.0), bounds)[0::2]
                children_best = np.maximum.reduceat(self._page_best[arrays.children_flat], arrays.child_offsets)
                beats[parents] = valid & (own > children_best)
            self._own_beats_children = beats.tolist()
        return self._own_beats_children[i]

    def page_best(self, i: int) -> float:
        """Best scaled page score in node i's range (0 without page text)."""
        return float(self._page_best[i])

    def subtree_text(self, i: int) -> float:
        """Best scaled title+summary score in node i's subtree (trees without page text)."""
        if self._subtree_text is None:
            best = self.node_text.copy()
            for flat in reversed(self.index.nodes):
                if flat.parent >= 0 and best[flat.index] > best[flat.parent]:
                    best[flat.parent] = best[flat.index]
            self._subtree_text = best
        return float(self._subtree_text[i])

    def lexical(self, i: int) -> float:
        """Page evidence (without pages: the subtree's best title/summary), title, summary."""
        return float(self._lexical[i])

    def semantic(self, i: int) -> float:
        lexical = self.lexical(i)
        model = self.model_scores.get(i)
        # A model score, when one was given, is blended half and half with the lexical one.
        return lexical if model is None else 0.5 * lexical + 0.5 * model

    def contextual(self, i: int) -> float:
        if not self.model_scores:
            return float(self._context[i])
        ancestors = self.index.path(i)
        if not ancestors:
            return self.document_relevance
        return sum(self.semantic(a) for a in ancestors) / len(ancestors)

    def probabilities(self, settings: QuerySettings) -> np.ndarray | None:
        """P(v|q) of every node at once, or None once a model has scored nodes (its scores
        arrive level by level, so they are blended node by node). Same arithmetic, in the same
        order, as `probability`."""
        if self.model_scores:
            return None
        key = (settings.semantic_weight, settings.structural_weight, settings.contextual_weight)
        if self._probabilities is None or self._probabilities[0] != key:
            prior = 1.0 / (1.0 + 0.25 * (self.index.arrays.depth - 1))
            vector = key[0] * self._lexical + key[1] * prior + key[2] * self._context
            self._probabilities = (key, vector, vector.tolist())
        return self._probabilities[1]

    def probability_list(self, settings: QuerySettings) -> list[float] | None:
        """`probabilities` as Python floats (the same values), for per-node look-ups in the walk."""
        if self.probabilities(settings) is None:
            return None
        assert self._probabilities is not None
        return self._probabilities[2]

    def has_evidence(self, i: int) -> bool:
        """semantic(i) > 0: the node has lexical (or model) evidence."""
        if self.model_scores:
            return self.semantic(i) > 0
        return self._has_evidence[i]

    def probability(self, i: int, settings: QuerySettings) -> float:
        vector = self.probabilities(settings)
        if vector is not None:
            return float(vector[i])
        depth = self.index.nodes[i].depth
        return (
            settings.semantic_weight * self.semantic(i)
            + settings.structural_weight * structural_prior(depth)
            + settings.contextual_weight * self.contextual(i)
        )

    def best_pages(self, i: int, limit: int) -> list[int]:
        """The node's best evidence pages (1-based), strongest first; its first page if none
        of its pages mentions a query term."""
        sl = self.index.node_page_slice(i)
        node = self.index.nodes[i].node
        if sl.stop <= sl.start:
            return [node.page_start]
        window = self.page[sl]
        order = np.argsort(-window, kind="stable")[:limit]
        top = float(window[order[0]])
        if top <= 0:
            return [node.page_start]
        # Pages far weaker than the node's best add tokens, not evidence.
        return [sl.start + int(k) + 1 for k in order if window[k] > 0 and window[k] >= 0.5 * top]
