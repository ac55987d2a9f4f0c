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
from dataclasses import dataclass

import numpy as np

from services.navigator.index import DocumentIndex, FlatNode
from shared.text.cross_references import Reference
from shared.text.lexical import BM25Index, sentences_of, terms
from shared.text.page_analysis import PageAnalysis
from shared.text.question import literal_share
from shared.text.term_ids import Postings, Ragged, Vocabulary, distinct_pairs

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
    """Per-page term postings of one document index, built from its page analysis.

    It holds the parts of the index it reads, never the index itself: the index keeps its
    PageFields (`DocumentIndex.derive`), and a back-reference would make a cycle that only the
    cyclic garbage collector frees, and a warm index is frozen out of its reach (`warm_heap`).
    """

    pages: Sequence[str]
    nodes: list[FlatNode]
    page_to_deepest: np.ndarray
    page_index: BM25Index
    analysis: PageAnalysis
    vocabulary: Vocabulary
    title_terms: Ragged | None = None  # each node's title terms as ids (`DocumentIndex.title_terms`)
    # Every window of every page, numbered page by page: page p (0-based) owns window ids
    # window_offsets[p] .. window_offsets[p + 1]; term -> the distinct ids of windows holding it.
    _window_offsets: np.ndarray | None = None
    _window_postings: Postings | None = None
    # term -> 0-based pages whose enclosing section titles hold it.
    _section_postings: Postings | None = None
    # (pages that have windows, their interleaved window bounds) for `np.maximum.reduceat`.
    _window_bounds: tuple[np.ndarray, np.ndarray] | None = None
    # The last question's weights and its per-page vectors by name ("proximity", "section",
    # "support"): one question asks for them once per batch of selected nodes.
    _last: tuple[tuple[tuple[str, float], ...], dict[str, np.ndarray]] | None = None

    # The definitions of the fields, page by page from the text; the postings below give the
    # same values for every page at once.

    def page_terms(self, page: int) -> frozenset[str]:
        """Every term of a 1-based page."""
        return frozenset(terms(self.pages[page - 1]))

    def windows(self, page: int) -> tuple[frozenset[str], ...]:
        """Term sets of every window of WINDOW_SENTENCES consecutive sentences of a 1-based page."""
        sentences = [frozenset(terms(s)) for s in sentences_of(self.pages[page - 1])]
        if len(sentences) <= WINDOW_SENTENCES:
            return (frozenset().union(*sentences),) if sentences else ()
        return tuple(
            frozenset().union(*sentences[k : k + WINDOW_SENTENCES])
            for k in range(len(sentences) - WINDOW_SENTENCES + 1)
        )

    def section(self, page: int) -> frozenset[str]:
        """Terms of the titles of the sections enclosing a 1-based page."""
        found: set[str] = set()
        node = int(self.page_to_deepest[page - 1]) if page <= len(self.page_to_deepest) else -1
        while node >= 0:
            found.update(terms(self.nodes[node].node.title))
            node = self.nodes[node].parent
        return frozenset(found)

    def text_references(self, page: int) -> list[Reference]:
        """Cross-references ("see Section 4.2") made by the text of a 1-based page."""
        return list(self.analysis.references.get(page - 1, ()))

    def warm(self) -> None:
        """Build the postings now (at index time), so no query pays for them."""
        self._section_layout()
        self._window_range_max(np.zeros(int(self._window_layout()[-1])))

    def _window_layout(self) -> np.ndarray:
        if self._window_offsets is None:
            self._window_offsets, self._window_postings = window_postings(self.analysis)
        return self._window_offsets

    def _section_layout(self) -> Postings:
        if self._section_postings is None:
            self._section_postings = section_postings(self.nodes, self.page_to_deepest, self.vocabulary,
                                                      self.title_terms)
        return self._section_postings

    def _question_vector(self, weights: dict[str, float], name: str) -> np.ndarray:
        key = tuple(weights.items())
        last = self._last
        if last is None or last[0] != key:
            last = self._last = (key, {})
        vector = last[1].get(name)
        if vector is None:
            compute = {"proximity": self.proximity_all, "section": self.section_all, "support": self.support_all}[name]
            vector = last[1][name] = compute(weights)
        return vector

    def question_fields(self, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """(`proximity_all`, `section_all`) for one question, kept until the next question."""
        return self._question_vector(weights, "proximity"), self._question_vector(weights, "section")

    def question_support(self, weights: dict[str, float]) -> np.ndarray:
        """`support_all` for one question, kept until the next question."""
        return self._question_vector(weights, "support")

    def support_all(self, weights: dict[str, float]) -> np.ndarray:
        """Coverage of the question by each page's terms together with its section titles
        (0-based pages): `coverage(weights, page_terms(page) | section(page))` for every page at once."""
        sections = self._section_layout()
        postings = self.page_index.postings
        total = sum(weights.values())
        sums = np.zeros(len(self.pages))
        if total <= 0:
            return sums
        for term, weight in weights.items():
            in_pages, in_titles = postings[term], sections[term]
            if in_pages is None and in_titles is None:
                continue
            found = np.zeros(len(sums), dtype=bool)
            if in_pages is not None:
                found[in_pages[0]] = True
            if in_titles is not None:
                found[in_titles[0]] = True
            sums[found] += weight
        return sums / total

    def proximity_all(self, weights: dict[str, float]) -> np.ndarray:
        """`proximity` of every page (0-based), from the window postings: one pass per question
        term, then one range maximum per page. Sums in the question's term order, as `coverage`."""
        offsets = self._window_layout()
        total = sum(weights.values())
        n_pages = len(offsets) - 1
        if total <= 0:
            return np.zeros(n_pages)
        sums = np.zeros(int(offsets[-1]))
        postings = self._window_postings
        assert postings is not None  # laid out with the offsets
        for term, weight in weights.items():
            entry = postings[term]
            if entry is not None:
                sums[entry[0]] += weight
        # max(s) / total == max(s / total): division by a positive number keeps the order.
        return self._window_range_max(sums) / total

    def _window_range_max(self, sums: np.ndarray) -> np.ndarray:
        """Best window of each page (0 for a page without windows), with bounds computed once."""
        if self._window_bounds is None:
            offsets = self._window_layout()
            has = offsets[1:] > offsets[:-1]
            bounds = np.empty(2 * int(has.sum()), dtype=np.int64)
            bounds[0::2] = offsets[:-1][has]
            bounds[1::2] = offsets[1:][has]
            self._window_bounds = (has, bounds)
        has, bounds = self._window_bounds
        out = np.zeros(len(has))
        if bounds.size:
            out[has] = np.maximum.reduceat(np.append(sums, 0.0), bounds)[0::2]
        return out

    def section_all(self, weights: dict[str, float]) -> np.ndarray:
        """Coverage of the question by each page's enclosing section titles (0-based pages)."""
        postings = self._section_layout()
        total = sum(weights.values())
        sums = np.zeros(len(self.pages))
        if total <= 0:
            return sums
        for term, weight in weights.items():
            entry = postings[term]
            if entry is not None:
                sums[entry[0]] += weight
        return sums / total


def page_fields(index: DocumentIndex) -> PageFields:
    """The index's page fields, derived on first use and kept with the index."""
    return index.derive(
        "page_fields",
        lambda: PageFields(index.pages, index.nodes, index.page_to_deepest, index.page_index, index.analysis,
                           index.term_vocabulary, index.title_terms),
    )


def window_postings(analysis: PageAnalysis) -> tuple[np.ndarray, Postings]:
    """(window offsets per page, term -> distinct window ids): window k of a page joins its
    sentences k .. k + WINDOW_SENTENCES - 1, and a page of no more sentences is one window."""
    sentence_offsets = analysis.sentence_offsets
    per_page = np.diff(sentence_offsets)
    windows = np.where(per_page > WINDOW_SENTENCES, per_page - WINDOW_SENTENCES + 1, np.minimum(per_page, 1))
    offsets = np.zeros(len(per_page) + 1, dtype=np.int64)
    np.cumsum(windows, out=offsets[1:])
    page = np.repeat(np.arange(len(per_page)), per_page)
    local = np.arange(len(page)) - sentence_offsets[page]
    count = windows[page]
    sentence_ids, window_ids = [], []
    for back in range(WINDOW_SENTENCES):
        # Sentence `local` is the (back + 1)-th of window `local - back`, when that window exists;
        # a page of few sentences puts every sentence in its one window.
        k = np.where(per_page[page] > WINDOW_SENTENCES, local - back, 0 if back == 0 else -1)
        valid = (k >= 0) & (k < count)
        sentence_ids.append(np.flatnonzero(valid))
        window_ids.append(offsets[page[valid]] + k[valid])
    ids, owner = analysis.sentences.gather(np.concatenate(sentence_ids))
    term, window, _ = distinct_pairs(ids, np.concatenate(window_ids)[owner], int(offsets[-1]))
    return offsets, Postings(analysis.vocabulary, term, (window,))


def section_postings(nodes: list[FlatNode], page_to_deepest: np.ndarray, vocabulary: Vocabulary,
                     titles: Ragged | None = None) -> Postings:
    """term -> the 0-based pages whose enclosing section titles (the deepest node covering the
    page and its ancestors) hold it. `titles`: each node's title terms as ids, when known."""
    paths: list[np.ndarray] = []
    if titles is None or len(titles) != len(nodes):
        titles = Ragged.of([vocabulary.ids_of(terms(flat.node.title)) for flat in nodes])
    for flat in nodes:  # pre-order: a parent's path exists before its children's
        own = titles.row(flat.index)
        paths.append(np.union1d(own, paths[flat.parent]) if flat.parent >= 0 else np.unique(own))
    covered = np.flatnonzero(page_to_deepest >= 0)
    ids, owner = Ragged.of(paths).gather(page_to_deepest[covered])
    term, page, _ = distinct_pairs(ids, covered[owner], len(page_to_deepest))
    return Postings(vocabulary, term, (page,))


def prepare(index: DocumentIndex) -> DocumentIndex:
    """Derive everything a query reads from the index now, not during the first query (the
    fused ranking's own page data: `ranking.features.prepare_ranking`)."""
    page_fields(index).warm()
    return index


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


def page_evidence_scores(
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
    if not pages:
        return out
    near, titled = fields.question_fields(weights)
    for page in pages:
        bm25 = float(page_scaled[page - 1])
        score = (
            bm25
            + PROXIMITY_WEIGHT * float(near[page - 1])
            + SECTION_WEIGHT * float(titled[page - 1])
        )
        if wanted_literals:
            score += LITERAL_WEIGHT * literal_share(index.pages[page - 1], wanted_literals)
        out[page] = score / total
    return out
