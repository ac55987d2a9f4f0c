"""Per-document lexical index: everything a query needs, precomputed once per tree version.

A `DocumentIndex` is pure data (no store, no transport). Services and the one-process engine
cache one per (doc_id, version).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import numpy as np

from services.navigator.stored_vectors import DenseVectors
from shared.model.documents import DocumentEmbeddings, DocumentRecord, DocumentTree
from shared.model.tree import TreeNode
from shared.text.lexical import BM25Index, terms
from shared.text.names import WordGroup
from shared.text.normalize import normalize
from shared.text.page_analysis import PageAnalysis, analyse_pages
from shared.text.term_ids import Postings, Ragged, Vocabulary

T = TypeVar("T")

@dataclass(frozen=True)
class FlatNode:
    """One tree node with its position in the flattened (pre-order) arrays."""

    index: int
    node: TreeNode
    parent: int  # -1 for a top-level node
    depth: int  # 1 for a top-level node
    children: tuple[int, ...]


@dataclass(frozen=True)
class NodeArrays:
    starts: np.ndarray  # 0-based first page of each node
    ends: np.ndarray  # 0-based exclusive end page, clipped to the known pages
    has_range: np.ndarray  # False when the node's pages are beyond the page text
    parent: np.ndarray
    depth: np.ndarray
    # (rows, their parents) of each depth from 2 down, for level-by-level accumulation.
    levels: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    # Precomputed interleaved page bounds of the nodes with a page range (see `range_max`).
    range_bounds: np.ndarray | None = None
    # Nodes with children; the 0-based page range of their own text (before the first child);
    # their children laid end to end, starting at child_offsets.
    parents_with_children: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    own_starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    own_stops: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    children_flat: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    child_offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def page_range_max(self, values: np.ndarray) -> np.ndarray:
        """`range_max(values, starts, ends)` with the bounds computed once per index."""
        if self.range_bounds is None or values.size == 0:
            return range_max(values, self.starts, self.ends)
        out = np.zeros(len(self.starts), dtype=np.float64)
        if self.range_bounds.size:
            out[self.has_range] = np.maximum.reduceat(np.append(values, 0.0), self.range_bounds)[0::2]
        return out


def range_max(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """max(values[s:e]) for every (s, e) pair at once (0 for empty ranges), in one C pass:
    `np.maximum.reduceat` over the interleaved bounds reduces exactly each [s, e) slice."""
    out = np.zeros(len(starts), dtype=np.float64)
    if values.size == 0 or len(starts) == 0:
        return out
    valid = ends > starts
    if not valid.any():
        return out
    padded = np.append(values, 0.0)  # an end equal to len(values) needs an index to point at
    bounds = np.empty(2 * int(valid.sum()), dtype=np.int64)
    bounds[0::2] = starts[valid]
    bounds[1::2] = ends[valid]
    out[valid] = np.maximum.reduceat(padded, bounds)[0::2]
    return out


# Compared by identity (its arrays have no truth value): modules that derive data from an
# index once keep it keyed by the index itself (e.g. `evidence.page_fields`).
@dataclass(eq=False)
class DocumentIndex:
    record: DocumentRecord
    nodes: list[FlatNode]
    roots: list[int]
    pages: Sequence[str]  # the texts, or `StoredPages` read when first used (stored_pages.py)
    page_index: BM25Index
    title_index: BM25Index
    summary_index: BM25Index
    # Node text (title + summary) stands in for pages when a tree comes without page text.
    node_text_index: BM25Index
    page_to_deepest: np.ndarray  # 0-based page -> index of the deepest node covering it, or -1
    has_summaries: bool
    # The pages' terms as ids, their sentences and headers, and the page features
    # (`shared/text/page_analysis.py`), over `term_vocabulary`: every field's terms.
    analysis: PageAnalysis
    term_vocabulary: Vocabulary
    by_id: dict[str, int] = field(default_factory=dict)
    # Stored page and node vectors, when the document was indexed with embeddings on.
    dense: DenseVectors | None = None
    # What each physical page prints as its number ("iv", "36"), when the PDF says (its
    # /PageLabels); page references in questions resolve through them (`page_references.py`).
    page_labels: list[str] | None = None
    # Resolved cross-references by reference; a tree never changes under its index.
    reference_cache: dict = field(default_factory=dict, repr=False)
    # Memoised look-ups of question words against this vocabulary (spelling, names), by kind.
    memo: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # What the fused ranker derives once per index (page profile, embeddings, term pairs), by name.
    ranking_memo: dict[str, Any] = field(default_factory=dict, repr=False)
    _idf_by_entry: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    # Each node's title terms and summary terms as ids of `term_vocabulary` (nodes in order).
    title_terms: Ragged = field(default_factory=lambda: Ragged.of([]), repr=False)
    summary_terms: Ragged = field(default_factory=lambda: Ragged.of([]), repr=False)

    def derive(self, key: str, build: Callable[[], T]) -> T:
        """What the ranker derives from this index once (page profile, vectors, term sets),
        built on first use and kept with the index."""
        if key not in self.ranking_memo:
            self.ranking_memo[key] = build()
        return self.ranking_memo[key]

    @property
    def doc_id(self) -> str:
        return self.record.doc_id

    @property
    def label(self) -> str:
        """How citations name this document."""
        return self.record.file_name or self.record.doc_id

    @cached_property
    def has_pages(self) -> bool:
        """Whether any page has a word: read from the analysis, so routing never needs the texts."""
        return bool(self.analysis.pages.ids.size)

    @cached_property
    def arrays(self) -> NodeArrays:
        """Per-node numbers for vectorised scoring (computed once per index)."""
        n_pages = len(self.pages)
        starts = np.array([f.node.page_start - 1 for f in self.nodes], dtype=np.int64)
        ends = np.array([min(f.node.page_end, n_pages) for f in self.nodes], dtype=np.int64)
        starts = np.minimum(starts, max(n_pages - 1, 0))
        has_range = ends > starts
        bounds = np.empty(2 * int(has_range.sum()), dtype=np.int64)
        bounds[0::2] = starts[has_range]
        bounds[1::2] = ends[has_range]
        parent = np.array([f.parent for f in self.nodes], dtype=np.int64)
        depth = np.array([f.depth for f in self.nodes], dtype=np.int64)
        levels = []
        for level in range(2, int(depth.max(initial=1)) + 1):
            rows = np.nonzero(depth == level)[0]
            levels.append((rows, parent[rows]))
        with_children = [f for f in self.nodes if f.children]
        own_starts = [f.node.page_start - 1 for f in with_children]
        own_stops = [min(self.nodes[f.children[0]].node.page_start - 1, n_pages) for f in with_children]
        lengths = [len(f.children) for f in with_children]
        return NodeArrays(
            starts=starts, ends=ends, has_range=has_range, parent=parent, depth=depth,
            levels=tuple(levels), range_bounds=bounds if n_pages else None,
            parents_with_children=np.array([f.index for f in with_children], dtype=np.int64),
            own_starts=np.array(own_starts, dtype=np.int64),
            own_stops=np.array(own_stops, dtype=np.int64),
            children_flat=np.array([c for f in with_children for c in f.children], dtype=np.int64),
            child_offsets=np.cumsum([0, *lengths[:-1]]).astype(np.int64) if lengths else np.zeros(0, dtype=np.int64),
        )

    @cached_property
    def normalised_titles(self) -> list[str]:
        return [normalize(f.node.title) for f in self.nodes]

    @cached_property
    def vocabulary_by_initial(self) -> dict[str, list[str]]:
        """Vocabulary grouped by first character, for fuzzy look-ups (each group carries the
        character counts that let a look-up skip most words)."""
        groups: dict[str, list[str]] = {}
        for term in sorted(self.vocabulary):
            groups.setdefault(term[:1], []).append(term)
        return {initial: WordGroup(words) for initial, words in groups.items()}

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every index term of the document: page text, titles and summaries."""
        return self.page_index.vocabulary | self.node_text_index.vocabulary

    @cached_property
    def _field_postings(self) -> Postings:
        """term -> (rows, saturated term frequencies, field number) over the four BM25 fields
        laid end to end (pages, titles, summaries, node text), so that one question term costs
        one update of one array instead of four. Entries of a term run field by field, rows
        ascending within each."""
        keys, rows, saturated, numbers = [], [], [], []
        offset = 0
        for number, field_index in enumerate(self.bm25_fields):
            postings = field_index.postings
            keys.append(np.repeat(postings.term_ids, postings.lengths()))
            field_rows, field_saturated = postings.columns
            rows.append(field_rows + offset)
            saturated.append(field_saturated)
            numbers.append(np.full(len(field_rows), number, dtype=np.int64))
            offset += field_index.n_rows
        key = np.concatenate(keys)
        order = np.argsort(key, kind="stable")
        return Postings(
            self.term_vocabulary, key[order],
            (np.concatenate(rows)[order], np.concatenate(saturated)[order], np.concatenate(numbers)[order]),
        )

    @property
    def bm25_fields(self) -> tuple[BM25Index, BM25Index, BM25Index, BM25Index]:
        return (self.page_index, self.title_index, self.summary_index, self.node_text_index)

    def field_scores(
        self, qterms: list[str], idf: dict[str, float] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """BM25 of the question over pages, titles, summaries and node text: the same values as
        each field's `BM25Index.scores(qterms, idf)`, added in the same order."""
        fields = self.bm25_fields
        a, b, c, d = (f.n_rows for f in fields)
        postings = self._field_postings
        rows, values = [], []
        for term in qterms:
            entry = postings[term]
            if entry is None:
                continue
            rows.append(entry[0])
            values.append((idf[term] if idf is not None and term in idf else self._entry_idf(term, entry[2])) * entry[1])
        if rows:
            # One pass adds every term's score to its rows, term after term as the loop found them.
            out = np.bincount(np.concatenate(rows), weights=np.concatenate(values), minlength=a + b + c + d)
        else:
            out = np.zeros(a + b + c + d, dtype=np.float64)
        return out[:a], out[a : a + b], out[a + b : a + b + c], out[a + b + c :]

    def _entry_idf(self, term: str, number: np.ndarray) -> np.ndarray:
        """Each field's own IDF of `term`, per posting entry (cached per vocabulary term)."""
        cached = self._idf_by_entry.get(term)
        if cached is None:
            cached = self._idf_by_entry[term] = np.array([f.idf(term) for f in self.bm25_fields])[number]
        return cached

    def dense_page_scores(self, question_vector: np.ndarray) -> np.ndarray | None:
        """Cosine of the question with every page (index 0 = physical page 1); None when the
        document has no vectors or they come from a model of another dimension."""
        return self.dense.similarities(self.dense.pages, question_vector) if self.dense else None

    def dense_node_scores(self, question_vector: np.ndarray) -> np.ndarray | None:
        """Cosine of the question with every node's title + summary, in `nodes` order (0 for a
        node without a vector); None as for `dense_page_scores`."""
        return self.dense.similarities(self.dense.nodes, question_vector) if self.dense else None

    def page_text(self, number: int) -> str | None:
        return self.pages[number - 1] if 1 <= number <= len(self.pages) else None

    def node_page_slice(self, i: int) -> slice:
        """0-based page slice of node i, clipped to the known pages."""
        node = self.nodes[i].node
        end = min(node.page_end, len(self.pages))
        return slice(node.page_start - 1, max(end, node.page_start - 1))

    @classmethod
    def build(
        cls,
        record: DocumentRecord,
        tree: DocumentTree,
        pages: Sequence[str],
        precompute: bool = True,
        embeddings: DocumentEmbeddings | None = None,
        page_labels: list[str] | None = None,
        analysis: PageAnalysis | None = None,
    ) -> DocumentIndex:
        """Index one tree version. `precompute` also builds the merged postings now, which every
        query over the document reads; what only some queries read (the spelling groups, the
        ranking's page data) is derived on first use, or now by `warm_names` and
        `ranking.features.prepare_ranking` when the index is warmed ahead of its queries.
        `embeddings`: the document's stored vectors, exposed as `dense`. `page_labels`: the
        document's printed page labels, one per page (ignored when their count differs; by
        default its card's). `analysis`: the pages' stored analysis (computed from `pages` when
        None); its vocabulary gains the tree's terms."""
        if analysis is None:
            analysis = analyse_pages(pages)
        elif analysis.page_count != len(pages):
            raise ValueError(f"the page analysis has {analysis.page_count} pages, the document {len(pages)}")
        if page_labels is None and record.card is not None and record.card.page_labels:
            page_labels = record.card.page_labels
        nodes, roots = _flattened(tree.nodes)
        page_to_deepest = deepest_nodes(nodes, len(pages))

        vocabulary = analysis.vocabulary
        titles, summaries = _node_terms(analysis, nodes)
        index = cls(
            record=record,
            nodes=nodes,
            roots=roots,
            pages=pages,
            page_index=BM25Index.of_ids(analysis.pages, vocabulary),
            title_index=BM25Index.of_ids(titles, vocabulary),
            summary_index=BM25Index.of_ids(summaries, vocabulary),
            node_text_index=BM25Index.of_ids(titles.joined(summaries), vocabulary),
            page_to_deepest=page_to_deepest,
            has_summaries=bool(summaries.ids.size),
            analysis=analysis,
            term_vocabulary=vocabulary,
            by_id={f.node.id: f.index for f in nodes},
            dense=DenseVectors.aligned(embeddings, [f.node.id for f in nodes], len(pages)) if embeddings else None,
            page_labels=list(page_labels) if page_labels and len(page_labels) == len(pages) else None,
            title_terms=titles, summary_terms=summaries,
        )
        if precompute:
            index._field_postings  # noqa: B018 - build the merged postings now, not in a query
        return index

    def warm_names(self) -> None:
        """Group and count the vocabulary's words now, not in the first query that looks a
        misspelt or unknown word up."""
        for group in self.vocabulary_by_initial.values():
            group.warm()  # type: ignore[attr-defined]

    def path(self, i: int) -> list[int]:
        """Ancestors of node i, top-level first (excluding i)."""
        out = []
        parent = self.nodes[i].parent
        while parent >= 0:
            out.append(parent)
            parent = self.nodes[parent].parent
        return out[::-1]


def _node_terms(analysis: PageAnalysis, nodes: list[FlatNode]) -> tuple[Ragged, Ragged]:
    """Each node's title and summary terms as ids: stored with the analysis when the indexer
    analysed this tree, else numbered now (titles first, then summaries, as the vocabulary
    grows), which is how the indexer numbers them."""
    stored = analysis.node_terms([(f.node.title, f.node.summary) for f in nodes])
    if stored is not None:
        return stored.titles, stored.summaries
    ids_of = analysis.vocabulary.ids_of
    titles = Ragged.of([ids_of(terms(f.node.title)) for f in nodes])
    return titles, Ragged.of([ids_of(terms(f.node.summary)) for f in nodes])


def _flattened(tree: list[TreeNode]) -> tuple[list[FlatNode], list[int]]:
    """The tree's nodes in pre-order, each with its parent, depth and children, and the
    positions of the top-level ones."""
    slots: list[FlatNode | None] = []

    def add(node: TreeNode, parent: int, depth: int) -> int:
        index = len(slots)
        slots.append(None)
        children = tuple(add(child, index, depth + 1) for child in node.children)
        slots[index] = FlatNode(index, node, parent, depth, children)
        return index

    roots = [add(root, -1, 1) for root in tree]
    return [flat for flat in slots if flat is not None], roots


def deepest_nodes(nodes: list[FlatNode], n_pages: int) -> np.ndarray:
    """0-based page -> the deepest node covering it, -1 for none. Of two nodes as deep, the
    later in pre-order owns the page (a later node at the same depth starts later). All the
    (node, page) pairs at once: the owner is the largest depth·n + position among a page's nodes."""
    out = np.full(n_pages, -1, dtype=np.int64)
    if not nodes or not n_pages:
        return out
    lo = np.array([f.node.page_start - 1 for f in nodes], dtype=np.int64)
    hi = np.minimum(np.array([f.node.page_end for f in nodes], dtype=np.int64), n_pages)
    covering = np.flatnonzero(lo < hi)
    lengths = (hi - lo)[covering]
    owner = np.repeat(covering, lengths)
    first = np.cumsum(lengths) - lengths
    page = lo[owner] + np.arange(int(lengths.sum())) - np.repeat(first, lengths)
    depth = np.array([f.depth for f in nodes], dtype=np.int64)
    best = np.full(n_pages, -1, dtype=np.int64)
    np.maximum.at(best, page, depth[owner] * len(nodes) + owner)
    held = best >= 0
    out[held] = best[held] % len(nodes)
    return out
