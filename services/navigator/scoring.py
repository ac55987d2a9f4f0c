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

from services.navigator.index import DocumentIndex, range_max
from shared.query import QuerySettings

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

    @classmethod
    def compute(cls, index: DocumentIndex, qterms: list[str], idf: dict[str, float] | None) -> DocumentScores:
        return cls(
            index=index,
            qterms=qterms,
            page_raw=index.page_index.scores(qterms, idf),
            title_raw=index.title_index.scores(qterms, idf),
            summary_raw=index.summary_index.scores(qterms, idf),
            node_text_raw=index.node_text_index.scores(qterms, idf),
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
            evidence = range_max(self.page, arrays.starts, arrays.ends)
        else:
            evidence = np.array([self.subtree_text(i) for i in range(len(self.index.nodes))])
        self._page_best = evidence if self.index.has_pages else np.zeros(len(self.index.nodes))
        weights = [(PAGE_WEIGHT, evidence), (TITLE_WEIGHT, self.title)]
        if self.index.has_summaries:
            weights.append((SUMMARY_WEIGHT, self.summary))
        total = sum(w for w, _ in weights)
        self._lexical = sum(w * a for w, a in weights) / total if len(self.index.nodes) else np.zeros(0)
        # Mean lexical score of each node's ancestors, level by level (parents come first).
        ancestor_sum = np.zeros(len(self.index.nodes))
        for depth in range(2, int(arrays.depth.max(initial=1)) + 1):
            rows = np.nonzero(arrays.depth == depth)[0]
            parents = arrays.parent[rows]
            ancestor_sum[rows] = ancestor_sum[parents] + self._lexical[parents]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = ancestor_sum / np.maximum(arrays.depth - 1, 1)
        self._context = np.where(arrays.depth > 1, mean, self.document_relevance)

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

    def probability(self, i: int, settings: QuerySettings) -> float:
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
