"""Candidate pages of one question and the features the fitted model ranks them on.

Candidates are the union of each document's best pages by BM25, its best pages by dense
similarity (when embeddings are on), the pages the tree walk selected, the pages the question
names and, for a question about the document itself, its cover pages (`page_references.py`). Every feature is general (no word list, no per-document rule) and on a 0..1 scale
or normalised within the question, so one set of weights serves every document:

| feature | what it measures |
|---|---|
| bm25 | page BM25, divided by the best candidate's for this question |
| bm25_rank | 1 / (1 + the page's BM25 rank in its document) |
| proximity | IDF-weighted share of the question's terms found in one window of two sentences |
| section_path | share found in the titles of the sections enclosing the page (all ancestors) |
| summary_path | share found in the summaries of those sections |
| header | share found in the page's first lines (running heads, statement titles) |
| header_pairs | share of the question's consecutive term pairs found in those lines |
| page_pairs | share of the question's consecutive term pairs found anywhere on the page |
| node_probability | the tree's P(v|q) of the deepest section holding the page |
| tree_rank | 1 / (1 + the page's rank among the tree walk's pages), 0 when the walk did not reach it |
| tree_score | the walk's own score of the page (page evidence and section P), divided by its best |
| listing | share of the page's lines ending in a page number (tables of contents, indexes) |
| numeric | share of the page's tokens that are numbers (tables) |
| position | the page's place in its document, 0 (first) .. 1 (last) |
| page_reference | the question names this page ("page 9", "page fourteen", "the last page"), printed labels resolved |
| literal | share of the question's options and dotted names the page quotes verbatim |
| dense_page | cosine of the question's and the page's embeddings (`dense.py`) |
| dense_section | cosine of the question's and its deepest section's (title path and summary) |
| dense_rank | 1 / (1 + the page's rank by dense_page in its document) |
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from services.navigator.evidence import page_fields
from services.navigator.index import DocumentIndex
from services.navigator.ranking.dense import (
    page_vectors,
    question_vector,
    section_vectors,
)
from services.navigator.ranking.page_references import named_pages, prior_pages
from services.navigator.ranking.profile import bigrams, page_profile, pair_shares
from shared.ports.model_roles import Embedder
from shared.text.lexical import terms
from shared.text.page_references import find_page_mentions
from shared.text.question import literal_share, topic_text

FEATURES = (
    "bm25", "bm25_rank", "proximity", "section_path", "summary_path", "header", "header_pairs",
    "page_pairs", "node_probability", "tree_rank", "tree_score", "listing", "numeric", "position",
    "page_reference", "literal", "dense_page", "dense_section", "dense_rank",
)
# The features that read embeddings (zero when embeddings are off).
DENSE_FEATURES = ("dense_page", "dense_section", "dense_rank")
# Best pages by BM25 each document contributes to the candidates, beside the tree's pages.
BM25_CANDIDATES = 20
# Best pages by dense similarity each document contributes (a page that words the question
# differently from the page still comes up).
DENSE_CANDIDATES = 20


@dataclass
class DocumentEvidence:
    """One document's scores for one question, as the tree walk left them."""

    index: DocumentIndex
    page_bm25: np.ndarray  # raw BM25 of every page (shared IDF when several documents)
    node_probability: np.ndarray  # P(v|q) of every node
    weights: dict[str, float]  # IDF of each question term
    tree_pages: list[int]  # 1-based pages of the walk's passages, best first
    tree_scores: dict[int, float] = field(default_factory=dict)  # the walk's score of each of them
    log_prior: float = 0.0  # log P(this document | question) from routing; 0 for a lone document


@dataclass
class CandidateSet:
    question: str
    documents: list[DocumentEvidence]
    keys: list[tuple[int, int]]  # (position in `documents`, 1-based page)
    matrix: np.ndarray  # one row per key, one column per FEATURES entry
    best_bm25: float = 0.0  # raw BM25 of the best candidate (before normalisation)
    # What each candidate's ranking score adds before ordering (the cover prior), one per key.
    prior: np.ndarray = field(default_factory=lambda: np.zeros(0))
    named: frozenset[tuple[int, int]] = frozenset()  # the keys of the pages the question names

    @property
    def prior_keys(self) -> frozenset[tuple[int, int]]:
        """The keys of the pages with a prior: the cover pages of a question about the document."""
        return frozenset(key for key, prior in zip(self.keys, self.prior.tolist(), strict=False) if prior > 0)

    def column(self, name: str) -> np.ndarray:
        return self.matrix[:, FEATURES.index(name)]

    def without_dense(self) -> CandidateSet:
        """A copy with the dense features at zero, as the candidates look with embeddings off."""
        matrix = self.matrix.copy()
        matrix[:, [FEATURES.index(name) for name in DENSE_FEATURES]] = 0.0
        return replace(self, matrix=matrix)


def prepare_ranking(index: DocumentIndex, embedder: Embedder | None) -> DocumentIndex:
    """Derive the ranking's per-page data now, not during the first query that shortlists the
    document: page fields, the page profile, section-summary terms, the page and section
    embeddings (`embedder`'s), and the spelling groups."""
    index.warm_names()
    page_fields(index).warm()
    page_profile(index)
    summary_path_terms(index)
    page_vectors(index, embedder)
    section_vectors(index, embedder)
    return index


def question_pairs(question: str) -> frozenset[tuple[str, str]]:
    return bigrams(terms(topic_text(question)))


def summary_path_terms(index: DocumentIndex) -> list[frozenset[str]]:
    """Per 0-based page: the terms of the summaries of every section enclosing it (cached)."""

    def build() -> list[frozenset[str]]:
        by_node: list[frozenset[str]] = []
        words, summaries = index.term_vocabulary.words, index.summary_terms
        for flat in index.nodes:  # pre-order: a parent's set exists before its children's
            own = frozenset([words[i] for i in summaries.row(flat.index).tolist()])  # terms(flat.node.summary)
            by_node.append(own | by_node[flat.parent] if flat.parent >= 0 else own)
        return [by_node[int(n)] if n >= 0 else frozenset() for n in index.page_to_deepest]

    return index.derive("summary_path_terms", build)


def _coverages(weights: dict[str, float], found: list[frozenset[str]]) -> list[float]:
    """The weighted share of the question's terms in each set of `found`."""
    total = sum(weights.values())
    if not total > 0:
        return [0.0] * len(found)
    weighted = list(weights.items())
    return [sum([w for t, w in weighted if t in f]) / total for f in found]


def _of_deepest(values: np.ndarray, deepest: np.ndarray) -> np.ndarray:
    """Each page's value of the deepest section holding it (0 for a page no section holds)."""
    out = np.zeros(len(deepest))
    held = deepest >= 0
    out[held] = values[deepest[held]]
    return out


def _ranks(scores: np.ndarray) -> np.ndarray:
    """0-based rank of every entry, best first (ties in order)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def candidate_pages(
    evidence: DocumentEvidence, referenced: Sequence[int], dense: np.ndarray | None = None
) -> list[int]:
    """The document's best BM25 pages, the walk's pages, its best pages by dense similarity
    (`dense`: one cosine per page) and `referenced`: the pages the question names or looks at
    first."""
    scores = evidence.page_bm25
    best = np.argsort(-scores, kind="stable")[:BM25_CANDIDATES]
    pages = [int(p) + 1 for p in best if scores[p] > 0]
    pages += evidence.tree_pages
    if dense is not None and DENSE_CANDIDATES and dense.any():
        pages += [int(p) + 1 for p in np.argsort(-dense, kind="stable")[:DENSE_CANDIDATES]]
    pages += [p for p in referenced if 1 <= p <= len(evidence.index.pages)]
    return list(dict.fromkeys(pages))


def build_candidates(
    question: str, documents: list[DocumentEvidence], wanted_literals: tuple[str, ...] = (),
    embedder: Embedder | None = None,
) -> CandidateSet:
    """Every candidate page of the question's documents, with its feature row (the dense
    features `embedder`'s; zeros without one)."""
    pairs = question_pairs(question)
    mentions = find_page_mentions(question)
    asked = question_vector(question, embedder)
    keys: list[tuple[int, int]] = []
    blocks: list[np.ndarray] = []
    priors: list[np.ndarray] = []
    named: set[tuple[int, int]] = set()
    for position, evidence in enumerate(documents):
        index = evidence.index
        if not index.has_pages:
            continue
        profile = page_profile(index)
        referenced = list(named_pages(index, mentions).pages)
        first_looked_at = prior_pages(index, question)
        summaries = summary_path_terms(index)
        near, titled = page_fields(index).question_fields(evidence.weights)
        tree_rank = {page: rank for rank, page in enumerate(dict.fromkeys(evidence.tree_pages))}
        tree_best = max(evidence.tree_scores.values(), default=0.0) or 1.0
        dense_all = page_vectors(index, embedder) @ asked
        pages = candidate_pages(evidence, [*referenced, *first_looked_at], dense_all)
        sections = section_vectors(index, embedder) @ asked if index.nodes else np.zeros(0)
        rows = np.array(pages, dtype=np.int64) - 1  # 0-based
        deepest = index.page_to_deepest[rows]
        weights = evidence.weights
        # Each feature for every candidate page of the document at once (the set-valued ones
        # page by page), in float64 as the model reads them.
        columns = {
            "bm25": evidence.page_bm25[rows],
            "bm25_rank": 1.0 / (1.0 + _ranks(evidence.page_bm25)[rows]),
            "proximity": near[rows],
            "section_path": titled[rows],
            "summary_path": _coverages(weights, [summaries[row] for row in rows.tolist()]),
            "header": _coverages(weights, [profile.header_terms[row] for row in rows.tolist()]),
            "header_pairs": pair_shares(profile.headers, profile.vocabulary, pairs, rows),
            "page_pairs": pair_shares(profile.pages, profile.vocabulary, pairs, rows),
            "node_probability": _of_deepest(evidence.node_probability, deepest),
            "tree_rank": [1.0 / (1.0 + tree_rank[page]) if page in tree_rank else 0.0 for page in pages],
            "tree_score": [evidence.tree_scores.get(page, 0.0) / tree_best for page in pages],
            "listing": profile.listing[rows],
            "numeric": profile.numeric[rows],
            "position": rows / max(1, len(index.pages) - 1),
            "page_reference": [1.0 if page in referenced else 0.0 for page in pages],
            "literal": [literal_share(index.pages[page - 1], wanted_literals) if wanted_literals else 0.0
                        for page in pages],
            "dense_page": dense_all[rows],
            "dense_section": _of_deepest(sections, deepest),
            "dense_rank": 1.0 / (1.0 + _ranks(dense_all)[rows]) if dense_all.any() else np.zeros(len(rows)),
        }
        keys += [(position, page) for page in pages]
        named |= {(position, page) for page in referenced}
        priors.append(np.array([first_looked_at.get(page, 0.0) for page in pages]))
        blocks.append(np.column_stack([np.asarray(columns[name], dtype=np.float64) for name in FEATURES]))
    matrix = np.vstack(blocks) if blocks else np.zeros((0, len(FEATURES)))
    best = float(matrix[:, 0].max()) if len(keys) else 0.0
    if best > 0:
        matrix[:, 0] /= best
    return CandidateSet(
        question=question, documents=documents, keys=keys, matrix=matrix, best_bm25=best,
        prior=np.concatenate(priors) if priors else np.zeros(0), named=frozenset(named),
    )
