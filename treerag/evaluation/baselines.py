"""Flat-retrieval baselines, answered by the same compressor-free verifier path.

- `bm25-pages`: BM25 over whole pages;
- `bm25-chunks`: BM25 over fixed 512-token chunks (the flat-RAG baseline);
- `dense-pages`: the configured embedder's cosine of the question to every page (a dense-only
  router and ranker over all pages at once).
Each hands its top passages straight to the verifier (no tree, no compression).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from services.compressor.tokens import count_tokens
from services.navigator.index import DocumentIndex
from services.navigator.ranking.dense import page_vectors, question_vector
from shared.model.documents import DocumentRecord
from shared.model.query import Passage
from shared.text.lexical import BM25Index, query_terms, terms
from treerag.evaluation.embedding import harness_embedder

CHUNK_TOKENS = 512
TOP_K = 5


@dataclass
class FlatIndex:
    """BM25 over flat units (pages or chunks) of one document."""

    record: DocumentRecord
    texts: list[str]
    pages: list[list[int]]  # 1-based pages each unit spans
    bm25: BM25Index

    def search(self, question: str, k: int = TOP_K) -> list[Passage]:
        scores = self.bm25.scores(query_terms(question))
        if not scores.size:
            return []
        order = np.argsort(-scores, kind="stable")[:k]
        best = float(scores[order[0]]) or 1.0
        label = self.record.file_name or self.record.doc_id
        return [
            Passage(doc_id=self.record.doc_id, file_name=label, node_id=f"unit-{int(i)}", title="",
                    pages=self.pages[int(i)], text=self.texts[int(i)], score=round(float(scores[i]) / best, 6))
            for i in order
            if scores[i] > 0
        ]


def page_index(record: DocumentRecord, pages: Sequence[str]) -> FlatIndex:
    return FlatIndex(record, list(pages), [[n] for n in range(1, len(pages) + 1)], BM25Index([terms(p) for p in pages]))


def chunk_pages(pages: Sequence[str], size: int = CHUNK_TOKENS) -> tuple[list[str], list[list[int]]]:
    """Consecutive chunks of about `size` tokens (page breaks ignored), with the pages each spans."""
    texts: list[str] = []
    spans: list[list[int]] = []
    words: list[str] = []
    span: list[int] = []
    used = 0
    for number, page in enumerate(pages, start=1):
        for word in page.split():
            cost = count_tokens(word)
            if used + cost > size and words:
                texts.append(" ".join(words))
                spans.append(span)
                words, span, used = [], [], 0
            words.append(word)
            used += cost
            if not span or span[-1] != number:
                span.append(number)
    if words:
        texts.append(" ".join(words))
        spans.append(span)
    return texts, spans


def chunk_index(record: DocumentRecord, pages: Sequence[str], size: int = CHUNK_TOKENS) -> FlatIndex:
    texts, spans = chunk_pages(pages, size)
    return FlatIndex(record, texts, spans, BM25Index([terms(t) for t in texts]))


@dataclass
class PooledIndex:
    """BM25 over the units of several documents at once (one IDF over all of them): the flat
    baseline of a question asked of a whole collection."""

    parts: list[FlatIndex]
    owners: list[tuple[int, int]]  # (part, unit) of each pooled row
    bm25: BM25Index

    @classmethod
    def of(cls, parts: list[FlatIndex]) -> PooledIndex:
        owners = [(p, u) for p, part in enumerate(parts) for u in range(len(part.texts))]
        return cls(parts, owners, BM25Index([terms(parts[p].texts[u]) for p, u in owners]))

    def search(self, question: str, k: int = TOP_K) -> list[Passage]:
        scores = self.bm25.scores(query_terms(question))
        if not scores.size:
            return []
        order = np.argsort(-scores, kind="stable")[:k]
        best = float(scores[order[0]]) or 1.0
        found = []
        for i in order:
            if scores[i] <= 0:
                continue
            part, unit = self.owners[int(i)]
            flat = self.parts[part]
            found.append(Passage(
                doc_id=flat.record.doc_id, file_name=flat.record.file_name or flat.record.doc_id,
                node_id=f"unit-{unit}", title="", pages=flat.pages[unit], text=flat.texts[unit],
                score=round(float(scores[i]) / best, 6),
            ))
        return found


def dense_search(question: str, indexes: list[DocumentIndex], k: int = TOP_K) -> list[Passage]:
    """The `k` pages of `indexes` most similar to the question by the configured embedder alone
    (none when embeddings are off)."""
    embedder = harness_embedder()
    if embedder is None:
        return []
    query = question_vector(question, embedder)
    owners = [(ix, n) for ix in indexes for n in range(len(ix.pages))]
    if not owners:
        return []
    scores = np.concatenate([page_vectors(ix, embedder) @ query for ix in indexes])
    order = np.argsort(-scores, kind="stable")[:k]
    best = float(scores[order[0]]) or 1.0
    found = []
    for i in order:
        index, n = owners[int(i)]
        found.append(Passage(doc_id=index.doc_id, file_name=index.label, node_id=f"page-{n + 1}", title="",
                             pages=[n + 1], text=index.pages[n], score=round(float(scores[i]) / best, 6)))
    return found
