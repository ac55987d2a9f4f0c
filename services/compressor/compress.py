"""Context compression: keep the passages relevant to the question, merge near-duplicates,
trim each passage to its relevant sentences, and fit a token budget.

Every kept passage keeps its doc id, node id and page numbers, so citations stay exact.
"""

from __future__ import annotations

import logging
import math
from collections import Counter

import numpy as np

from services.compressor.tokens import count_tokens
from shared.adapters.logs import log_fields
from shared.model.query import CompressedContext, Passage, QuerySettings
from shared.text.lexical import query_terms, sentences_of, terms

logger = logging.getLogger(__name__)

# Sentences around a relevant one that are kept for context (answers often follow the
# sentence that names the topic).
NEIGHBOURS = 1
# A sentence is kept when it carries this share of the best sentence's question-term weight.
TRIM_SHARE = 0.5
LONG_SENTENCE_WORDS = 40


def tfidf_matrix(texts: list[str], query: str) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalised TF-IDF rows of `texts` and of `query`, with the formula of scikit-learn's
    TfidfVectorizer(sublinear_tf=True, smooth_idf=True): tf = 1 + ln(count),
    idf = ln((1 + n) / (1 + df)) + 1, fitted on the texts. Computed directly from the cached
    term lists, which is several times faster than the vectorizer on a handful of passages."""
    rows = [Counter(terms(t)) for t in texts]
    vocabulary = {term: k for k, term in enumerate(sorted({t for row in rows for t in row}))}
    n = len(texts)
    if not vocabulary:
        return np.zeros((n, 0)), np.zeros(0)
    columns = [np.fromiter(map(vocabulary.__getitem__, row), dtype=np.int64, count=len(row)) for row in rows]
    df = np.bincount(np.concatenate(columns), minlength=len(vocabulary)).astype(np.float64)
    idf = np.log((1 + n) / (1 + df)) + 1.0

    def vector(counts: Counter[str], found: np.ndarray) -> np.ndarray:
        v = np.zeros(len(vocabulary))
        v[found] = np.array([1.0 + math.log(count) for count in counts.values()]) * idf[found]
        norm = np.linalg.norm(v)
        return v / norm if norm > 0 else v

    matrix = np.array([vector(row, found) for row, found in zip(rows, columns, strict=True)])
    query_counts = Counter(t for t in terms(query) if t in vocabulary)
    query_found = np.fromiter(map(vocabulary.__getitem__, query_counts), dtype=np.int64, count=len(query_counts))
    return matrix, vector(query_counts, query_found)


def _tfidf(question: str, passages: list[Passage]) -> tuple[np.ndarray, np.ndarray]:
    """Relevance of each passage to the question (cosine) and passage-by-passage cosines."""
    matrix, query = tfidf_matrix([p.text for p in passages], question)
    if matrix.shape[1] == 0:
        n = len(passages)
        return np.zeros(n), np.eye(n)
    return matrix @ query, matrix @ matrix.T


def _units(text: str) -> list[tuple[str, str]]:
    """Sentences, with over-long ones (code, tables, text without punctuation) cut into
    pieces of about LONG_SENTENCE_WORDS words so trimming can still choose; each unit with the
    sentence it was cut from (itself when not cut)."""
    units: list[tuple[str, str]] = []
    for sentence in sentences_of(text):
        words = sentence.split()
        if len(words) <= LONG_SENTENCE_WORDS:
            units.append((sentence, sentence))
            continue
        for start in range(0, len(words), LONG_SENTENCE_WORDS):
            units.append((" ".join(words[start : start + LONG_SENTENCE_WORDS]), sentence))
    return units


def _wanted_in(unit: str, sentence: str, wanted: frozenset[str]) -> frozenset[str]:
    """The wanted terms `unit` holds. A piece of an ASCII sentence without line breaks holds
    only terms its sentence holds (such a sentence is tokenised as its words joined by single
    spaces, and no ASCII token spans a space): when the sentence, whose terms are usually known
    already, holds none, its pieces are not tokenised."""
    if sentence.isascii() and "\n" not in sentence and wanted.isdisjoint(terms(sentence)):
        return frozenset()
    return wanted.intersection(terms(unit))


def trim_passages(texts: list[str], qterms: list[str], neighbours: int = NEIGHBOURS) -> list[str]:
    """Each text cut down to its sentences that matter for the question, with neighbours.

    A sentence matters when its IDF-weighted share of question terms reaches TRIM_SHARE of the
    best sentence's (IDF over every sentence of the context). Gaps are marked with an ellipsis.
    A text without one keeps only its best sentence; a text with no question term at all
    becomes empty.
    """
    wanted = frozenset(qterms)
    units = [_units(t) for t in texts]
    # Only the question's terms count below: each unit's share of them is all it needs.
    unit_terms = [[_wanted_in(unit, sentence, wanted) for unit, sentence in us] for us in units]
    n = sum(len(us) for us in units) or 1
    holding = Counter(q for uts in unit_terms for ts in uts for q in ts)  # units holding each term
    idf = {q: math.log((n + 1) / (holding[q] + 0.5)) for q in qterms}
    weights = [[sum(idf[q] for q in qterms if q in ts) if ts else 0 for ts in uts] for uts in unit_terms]
    best = max((w for ws in weights for w in ws), default=0.0)
    out: list[str] = []
    for _text, sentences, ws in zip(texts, units, weights, strict=True):
        hits = [k for k, w in enumerate(ws) if best > 0 and w >= TRIM_SHARE * best]
        if not hits and ws and max(ws) > 0:
            hits = [ws.index(max(ws))]  # a weaker passage keeps only its best sentence
        if not hits:
            out.append("")
            continue
        keep = sorted({j for k in hits for j in range(k - neighbours, k + neighbours + 1) if 0 <= j < len(sentences)})
        pieces: list[str] = ["…"] if keep[0] > 0 else []
        last = keep[0] - 1
        for j in keep:
            if j != last + 1:
                pieces.append("…")
            pieces.append(sentences[j][0])
            last = j
        if keep[-1] < len(sentences) - 1:
            pieces.append("…")
        out.append(" ".join(pieces))
    return out


def _fit(text: str, budget: int) -> str:
    """The longest prefix of whole units (sentences, over-long ones in pieces) within `budget`
    tokens: a table or a run of text without punctuation still yields its first rows."""
    out: list[str] = []
    used = 0
    for sentence, _ in _units(text):
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
    trimmed = trim_passages([passages[k].text for k in kept], query_terms(question))
    out: list[Passage] = []
    used = 0
    for k, text in zip(kept, trimmed, strict=True):
        passage = passages[k]
        if not text:
            dropped += 1
            continue
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
