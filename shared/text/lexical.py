"""Lexical relevance: query terms and a BM25 index whose IDF can be shared across documents.

Scores are computed from precomputed postings (term -> rows, saturated term frequency), so a
query costs one pass over the postings of its terms. IDF is applied at query time, which lets
several documents' indexes be scored with one corpus-wide IDF when routing across documents.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from shared.model.lru import text_cache
from shared.text.normalize import split_sentences, tokenize
from shared.text.question import topic_text
from shared.text.term_ids import Postings, Ragged, Vocabulary, distinct_pairs

# Function words that carry no topic; kept short on purpose so that domain words survive.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have
    having he her here hers him his how i if in into is it its itself me more most my no nor not
    of off on once only or other our ours out over own same she should so some such than that the
    their theirs them then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours about above after
    again against all any because before below between both down during each few further just
    may might must shall also via per within without whether i.e e.g etc use used using
    의 를 을 이 가 은 는 에 에서 와 과 도 로 으로 및 무엇 무엇인가 인가 대한 대해 어떤 어떻게 핵심 내용""".split()
)


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """A light English suffix folding: possessive, plural and common verb endings."""
    if token.endswith("'s"):
        token = token[:-2]
    if not token.isascii() or not token.isalpha() or len(token) <= 3:
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith("sses"):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    if token.endswith("ing") and len(token) > 5:
        return token[:-3]
    if token.endswith("ed") and len(token) > 4:
        return token[:-2]
    return token


def terms(text: str) -> list[str]:
    """Content terms of `text`: tokens without function words, lightly stemmed."""
    return list(_cached_terms(text))


# Pages and sentences recur across the queries of a session: each is tokenised once. The entry
# bound holds what the warm indexes of a one-process engine tokenise (about 100,000 pages,
# sentences, titles and summaries for 50 documents), which its compressor and verifier ask for
# again; with 65,536 entries, warming evicted most pages before a query asked for them. The
# character bound is the one that holds memory: an entry costs about 1-2 bytes a character
# besides its text, so 262,144 long pages would have been gigabytes.
TERM_CACHE_ENTRIES = 262_144
TERM_CACHE_CHARS = 32_000_000
SENTENCE_CACHE_CHARS = 16_000_000


@text_cache(max_entries=TERM_CACHE_ENTRIES, max_chars=TERM_CACHE_CHARS)
def _cached_terms(text: str) -> tuple[str, ...]:
    return tuple(filter(None, map(_term, tokenize(text))))


@lru_cache(maxsize=200_000)
def _term(token: str) -> str | None:
    """The content term a token stands for; None for a function word or a lone ASCII character."""
    if token in STOPWORDS or (len(token) == 1 and token.isascii()):
        return None
    return stem(token)


def query_terms(text: str) -> list[str]:
    """Distinct content terms of a question, in order of first appearance; answer-type words
    ("many" in "how many") are not topic terms."""
    return list(dict.fromkeys(terms(topic_text(text))))


def bm25_idf(n_rows: int, df: int) -> float:
    return math.log(1.0 + (n_rows - df + 0.5) / (df + 0.5))


class BM25Index:
    """Okapi BM25 over rows of terms (pages, titles, summaries, chunks), its postings kept as
    arrays by term id (`term_ids.Postings`)."""

    def __init__(
        self, rows: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75, vocabulary: Vocabulary | None = None
    ) -> None:
        """`vocabulary`: the document's, shared by its several indexes (new terms are added)."""
        vocabulary = vocabulary if vocabulary is not None else Vocabulary()
        self._build(Ragged.of([vocabulary.ids_of(row) for row in rows]), vocabulary, k1, b)

    @classmethod
    def of_ids(cls, rows: Ragged, vocabulary: Vocabulary, k1: float = 1.2, b: float = 0.75) -> BM25Index:
        """The index of rows already given as term ids of `vocabulary`."""
        index = cls.__new__(cls)
        index._build(rows, vocabulary, k1, b)
        return index

    def _build(self, rows: Ragged, vocabulary: Vocabulary, k1: float, b: float) -> None:
        self.n_rows = len(rows)
        lengths = rows.lengths().astype(np.float64)
        avg = float(lengths.mean()) if self.n_rows and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths / avg) if self.n_rows else lengths
        term, row, tf = distinct_pairs(rows.ids, rows.row_numbers(), self.n_rows)
        saturated = tf * (k1 + 1.0) / (tf + norm[row])
        self._postings = Postings(vocabulary, term, (row, saturated))
        self._idf: dict[str, float] = {}

    @property
    def vocabulary(self) -> frozenset[str]:
        return self._postings.words()

    @property
    def postings(self) -> Postings:
        """term -> (rows holding it, saturated term frequency in each); read-only."""
        return self._postings

    def df(self, term: str) -> int:
        entry = self._postings[term]
        return 0 if entry is None else len(entry[0])

    def idf(self, term: str) -> float:
        # Cached per vocabulary term only, so the cache never outgrows the index.
        cached = self._idf.get(term)
        if cached is None:
            cached = bm25_idf(self.n_rows, self.df(term))
            if term in self._postings:
                self._idf[term] = cached
        return cached

    def scores(self, qterms: Iterable[str], idf: dict[str, float] | None = None) -> np.ndarray:
        """BM25 of every row; `idf` overrides this index's own IDF (corpus-wide routing)."""
        out = np.zeros(self.n_rows, dtype=np.float64)
        for term in qterms:
            entry = self._postings[term]
            if entry is None:
                continue
            weight = idf[term] if idf is not None and term in idf else self.idf(term)
            out[entry[0]] += weight * entry[1]
        return out

    def matched(self, qterms: Iterable[str], row: int) -> list[str]:
        """Query terms present in one row."""
        found = []
        for term in qterms:
            entry = self._postings[term]
            if entry is not None and row in set(entry[0].tolist()):
                found.append(term)
        return found


def shared_idf(indexes: Sequence[BM25Index], qterms: Iterable[str]) -> dict[str, float]:
    """IDF of each query term over the union of the rows of several indexes."""
    n_rows = sum(ix.n_rows for ix in indexes)
    postings = [ix.postings for ix in indexes]
    out = {}
    for term in qterms:
        df = 0
        for held in postings:  # one dictionary look-up per index: a shared store has hundreds
            entry = held[term]
            if entry is not None:
                df += len(entry[0])
        out[term] = bm25_idf(n_rows, df)
    return out


@text_cache(max_entries=8192, max_chars=SENTENCE_CACHE_CHARS)
def sentences_of(text: str) -> tuple[str, ...]:
    """`split_sentences`, memoised: the same pages are split by several stages and queries."""
    return tuple(split_sentences(text))
