"""Context compression: keep the passages relevant to the question, merge near-duplicates,
trim each passage to its relevant sentences, and fit a token budget.

Every kept passage keeps its doc id, node id and page numbers, so citations stay exact.
"""

from __future__ import annotations

import logging

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from services.compressor.tokens import count_tokens
from services.navigator.lexical import query_terms, sentences_of, terms
from shared.logs import log_fields
from shared.query import CompressedContext, Passage, QuerySettings


logger = logging.getLogger(__name__)

# Sentences around a relevant one that are kept for context (answers often follow the
# sentence that names the topic).
NEIGHBOURS = 1
GAP_MARK = " … "


def _tfidf(question: str, passages: list[Passage]) -> tuple[np.ndarray, np.ndarray]:
    """Relevance of each passage to the question (cosine, real IDF over the passages) and the
    passage-by-passage cosine matrix."""
    vectorizer = TfidfVectorizer(analyzer=terms, sublinear_tf=True, smooth_idf=True, norm="l2")
    try:
        matrix = vectorizer.fit_transform([p.text for p in passages])
    except ValueError:  # every passage is empty of content terms
        n = len(passages)
        return np.zeros(n), np.eye(n)
    query = vectorizer.transform([question])
    relevance = (matrix @ query.T).toarray().ravel()
    similarity = (matrix @ matrix.T).toarray()
    return relevance, similarity


def trim_to_relevant(text: str, qterms: set[str], neighbours: int = NEIGHBOURS) -> str:
    """The sentences of `text` that mention a question term, with their neighbours; gaps are
    marked with an ellipsis. Text with no such sentence is returned unchanged."""
    sentences = sentences_of(text)
    hits = [k for k, s in enumerate(sentences) if qterms.intersection(terms(s))]
    if not hits:
        return text
    keep = sorted({j for k in hits for j in range(k - neighbours, k + neighbours + 1) if 0 <= j < len(sentences)})
    pieces: list[str] = []
    last = -1
    for j in keep:
        if pieces and j != last + 1:
            pieces.append(GAP_MARK.strip())
        pieces.append(sentences[j])
        last = j
    if keep[0] > 0:
        pieces.insert(0, GAP_MARK.strip())
    if keep[-1] < len(sentences) - 1:
        pieces.append(GAP_MARK.strip())
    return " ".join(pieces)


def _fit(text: str, budget: int) -> str:
    """The longest prefix of whole sentences within `budget` tokens."""
    out: list[str] = []
    used = 0
    for sentence in sentences_of(text):
        cost = count_tokens(sentence)
        if used + cost > budget:
            break
        out.append(sentence)
        used += cost
    return " ".join(out)


def compress(question: str, passages: list[Passage], settings: QuerySettings) -> CompressedContext:
    """Filter, de-duplicate, trim and budget `passages` (given best first)."""
    tokens_before = sum(count_tokens(p.text) for p in passages)
    if not passages:
        return CompressedContext(question=question, passages=[], tokens_before=0, tokens_after=0)
    relevance, similarity = _tfidf(question, passages)
    best = float(relevance.max())
    # The floor is relative to the best passage: raw cosines of a short question against whole
    # pages are small, and what matters is how a passage compares with the best one.
    scaled = relevance / best if best > 0 else np.zeros_like(relevance)
    kept: list[int] = []
    dropped = merged = 0
    for k in range(len(passages)):
        if kept and scaled[k] < settings.relevance_floor:
            dropped += 1
            continue
        twin = next((j for j in kept if similarity[k, j] >= settings.dedup_threshold), None)
        if twin is not None:
            # Passages come best first, so the one already kept is the better one.
            merged += 1
            continue
        kept.append(k)
    qset = set(query_terms(question))
    out: list[Passage] = []
    used = 0
    for k in kept:
        passage = passages[k]
        text = trim_to_relevant(passage.text, qset)
        cost = count_tokens(text)
        if used + cost > settings.token_budget:
            text = _fit(text, settings.token_budget - used)
            cost = count_tokens(text)
            if not text:
                break
        out.append(passage.model_copy(update={"text": text}))
        used += cost
    logger.debug(
        "compressed",
        extra=log_fields(before=tokens_before, after=used, dropped=dropped, merged=merged, kept=len(out)),
    )
    return CompressedContext(
        question=question,
        passages=out,
        tokens_before=tokens_before,
        tokens_after=used,
        dropped_irrelevant=dropped,
        merged_duplicates=merged,
    )
