"""Page evidence: the second-stage ranking of the candidate pages of the selected nodes.

BM25 over a whole page rewards a page that repeats the question's words anywhere; an answer
sits where the question's informative terms meet. A candidate page is therefore ranked on
three fields, each an IDF-weighted share of the question's terms (0..1):

- *page*: its BM25, scaled by the best candidate's (the bag-of-words evidence);
- *proximity*: the best window of two consecutive sentences — how many of the question's
  informative terms occur together;
- *section*: the titles of the sections enclosing the page (the deepest node covering it and
  its ancestors) — what the tree knows about the page that its text may not say;
- *literal*: the share of the question's options and dotted names ("-e", ".First") the page
  quotes verbatim (only when the question has any).

The fields are summed with fixed weights (BM25F-style: each field adds evidence, a strong
field cannot be cancelled by a weak one). Per-page sentence terms and section-path terms are
computed once per index and cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from services.navigator.index import DocumentIndex
from services.navigator.lexical import sentences_of, terms
from services.navigator.question import literal_share

# Weights of the proximity and section fields beside the scaled page BM25 (weight 1).
PROXIMITY_WEIGHT = 1.0
SECTION_WEIGHT = 0.5
# Weight of the literal field: the question's options and dotted names found verbatim.
LITERAL_WEIGHT = 0.5
# Consecutive sentences that form one proximity window.
WINDOW_SENTENCES = 2
# Candidate pages considered inside one node (the best by BM25), before reranking.
CANDIDATES_PER_NODE = 6


@dataclass
class PageFields:
    """Cached per-page term sets of one document index."""

    index: DocumentIndex
    _windows: dict[int, tuple[frozenset[str], ...]] = field(default_factory=dict)
    _sections: dict[int, frozenset[str]] = field(default_factory=dict)
    _pages: dict[int, frozenset[str]] = field(default_factory=dict)

    def page_terms(self, page: int) -> frozenset[str]:
        """Every term of a 1-based page."""
        cached = self._pages.get(page)
        if cached is None:
            cached = self._pages[page] = frozenset(terms(self.index.pages[page - 1]))
        return cached

    def windows(self, page: int) -> tuple[frozenset[str], ...]:
        """Term sets of every window of WINDOW_SENTENCES consecutive sentences of a 1-based page."""
        cached = self._windows.get(page)
        if cached is None:
            sentences = [frozenset(terms(s)) for s in sentences_of(self.index.pages[page - 1])]
            if len(sentences) <= WINDOW_SENTENCES:
                cached = (frozenset().union(*sentences),) if sentences else ()
            else:
                cached = tuple(
                    frozenset().union(*sentences[k : k + WINDOW_SENTENCES])
                    for k in range(len(sentences) - WINDOW_SENTENCES + 1)
                )
            self._windows[page] = cached
        return cached

    def section(self, page: int) -> frozenset[str]:
        """Terms of the titles of the sections enclosing a 1-based page."""
        cached = self._sections.get(page)
        if cached is None:
            found: set[str] = set()
            node = int(self.index.page_to_deepest[page - 1]) if page <= len(self.index.page_to_deepest) else -1
            while node >= 0:
                found.update(terms(self.index.nodes[node].node.title))
                node = self.index.nodes[node].parent
            cached = frozenset(found)
            self._sections[page] = cached
        return cached


    def warm(self) -> None:
        """Split and tokenise every page now (at index time), so no query pays for it."""
        for page in range(1, len(self.index.pages) + 1):
            self.windows(page)
            self.page_terms(page)


def page_fields(index: DocumentIndex) -> PageFields:
    """The index's cached page fields (created on first use)."""
    cached = index.derived.get("page_fields")
    if cached is None:
        cached = index.derived["page_fields"] = PageFields(index)
    return cached


def term_weights(index: DocumentIndex, qterms: Sequence[str], idf: dict[str, float] | None) -> dict[str, float]:
    """IDF of each question term (the shared one when routing over several documents)."""
    if idf is not None:
        return {t: idf.get(t, index.page_index.idf(t)) for t in qterms}
    return {t: index.page_index.idf(t) for t in qterms}


def coverage(weights: dict[str, float], found: frozenset[str] | set[str]) -> float:
    """IDF-weighted share of the question's terms present in `found`."""
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in found) / total if total > 0 else 0.0


def proximity(fields: PageFields, page: int, weights: dict[str, float]) -> float:
    """Best IDF-weighted coverage of the question by one window of consecutive sentences."""
    return max((coverage(weights, w) for w in fields.windows(page)), default=0.0)


def rerank_pages(
    index: DocumentIndex,
    pages: Sequence[int],
    page_scaled: np.ndarray,
    weights: dict[str, float],
    wanted_literals: tuple[str, ...] = (),
) -> dict[int, float]:
    """Evidence score of each 1-based page (higher is better), on a 0..1 scale. `page_scaled`
    is the page BM25 already scaled by the best page of the query's documents."""
    fields = page_fields(index)
    total = 1.0 + PROXIMITY_WEIGHT + SECTION_WEIGHT + (LITERAL_WEIGHT if wanted_literals else 0.0)
    out: dict[int, float] = {}
    for page in pages:
        bm25 = float(page_scaled[page - 1])
        score = (
            bm25
            + PROXIMITY_WEIGHT * proximity(fields, page, weights)
            + SECTION_WEIGHT * coverage(weights, fields.section(page))
        )
        if wanted_literals:
            score += LITERAL_WEIGHT * literal_share(index.pages[page - 1], wanted_literals)
        out[page] = score / total
    return out
