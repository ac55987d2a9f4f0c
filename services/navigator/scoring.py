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
        self.page = _scale(self.page_raw, best.page)
        self.title = _scale(self.title_raw, best.title)
        self.summary = _scale(self.summary_raw, best.summary)
        self.node_text = _scale(self.node_text_raw, best.node_text)
        if self.index.has_pages:
            self.document_relevance = float(self.page.max()) if self.page.size else 0.0
        else:
            self.document_relevance = float(self.node_text.max()) if self.node_text.size else 0.0
        self._semantic.clear()

    def page_best(self, i: int) -> float:
        """Best scaled page score in node i's range (0 without page text)."""
        sl = self.index.node_page_slice(i)
        if sl.stop <= sl.start:
            return 0.0
        return float(self.page[sl].max())

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
        if i in self._semantic:
            return self._semantic[i]
        if self.index.has_pages:
            parts = [(PAGE_WEIGHT, self.page_best(i)), (TITLE_WEIGHT, float(self.title[i]))]
            if self.index.has_summaries:
                parts.append((SUMMARY_WEIGHT, float(self.summary[i])))
        else:
            # Without pages, the subtree's best title/summary stands in for the page evidence.
            parts = [(PAGE_WEIGHT, self.subtree_text(i)), (TITLE_WEIGHT, float(self.title[i]))]
            if self.index.has_summaries:
                parts.append((SUMMARY_WEIGHT, float(self.summary[i])))
        total = sum(w for w, _ in parts)
        value = sum(w * s for w, s in parts) / total
        self._semantic[i] = value
        return value

    def semantic(self, i: int) -> float:
        lexical = self.lexical(i)
        model = self.model_scores.get(i)
        # A model score, when one was given, is blended half and half with the lexical one.
        return lexical if model is None else 0.5 * lexical + 0.5 * model

    def contextual(self, i: int) -> float:
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
