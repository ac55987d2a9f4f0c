"""Names in a question (proper nouns, acronyms) that a document must mention to answer it.

A name a document never mentions is a sign that it cannot answer the question, however well
its other words match; the ranking model weighs that sign with the others (it is one feature,
not a veto). Spelling slips still count as mentions.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from shared.text.lexical import terms
from shared.text.periods import period_spans

# A named term this similar to a document word counts as mentioned (typos, transpositions).
NAME_SIMILARITY = 0.8
# A question term absent from a document is read as this close a document word (a typo).
SPELLING_SIMILARITY = 0.85
MIN_NAME_LENGTH = 3
FUZZY_MIN_LENGTH = 5
# Fuzzy look-ups remembered per vocabulary, all forgotten when full (as the spelling memo).
MAX_MEMOISED_TERMS = 10_000

# Capitalised words that point into a document rather than name something in it.
_POINTERS = frozenset(
    "section sections chapter chapters article articles table tables figure figures fig appendix "
    "item items part parts page pages step steps note notes example examples question answer".split()
)
# A name is a proper name (a capitalised word) or an abbreviation or code (capitals and digits).
_ABBREVIATION_FORM = r"[A-Z][A-Z0-9]+"
_NAME = re.compile(rf"\b(?:[A-Z][a-z]+(?:'s)?|{_ABBREVIATION_FORM})\b")
_ABBREVIATION = re.compile(_ABBREVIATION_FORM)
_POSSESSIVE = re.compile(r"['’]s$")
_SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s*|\(\s*|[\"'`]\s*)$")


# Characters are counted in this many buckets for the fuzzy pre-filter: a-z and 0-9 get their
# own, every other character shares the rest (a shared bucket only loosens the bound).
_BUCKETS = 48


def _buckets(text: str) -> np.ndarray:
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    letters = (codes >= 97) & (codes <= 122)
    digits = (codes >= 48) & (codes <= 57)
    return np.where(letters, codes - 97, np.where(digits, codes - 48 + 26, 36 + codes % (_BUCKETS - 36)))


def _bucket(ch: str) -> int:
    code = ord(ch)
    if 97 <= code <= 122:
        return code - 97
    if 48 <= code <= 57:
        return code - 48 + 26
    return 36 + code % (_BUCKETS - 36)


@lru_cache(maxsize=8192)
def _char_counts(word: str) -> np.ndarray:
    """Bucketed character counts of a word (cached: one term is looked up in every document)."""
    counts = [0] * _BUCKETS
    for ch in word:
        counts[_bucket(ch)] += 1
    array = np.array(counts, dtype=np.int16)
    array.flags.writeable = False
    return array


class WordGroup(list[str]):
    """Vocabulary words sharing a first character, with their character counts, so a fuzzy
    look-up can discard most words with one vectorised bound before difflib compares any."""

    def __init__(self, words: Sequence[str]) -> None:
        super().__init__(words)
        # Words ordered by length: positions in the group, lengths, character counts, and
        # where each length starts, so a length window is one contiguous slice.
        self._sorted: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def warm(self) -> None:
        """Count every word's characters (once; at index time when the index is precomputed)."""
        lengths = np.array([len(w) for w in self], dtype=np.int64)
        counts = np.zeros((len(self), _BUCKETS), dtype=np.int16)
        if len(self):
            rows = np.repeat(np.arange(len(self)), lengths)
            np.add.at(counts, (rows, _buckets("".join(self))), 1)
        order = np.argsort(lengths, kind="stable")
        ordered = lengths[order]
        starts = np.searchsorted(ordered, np.arange(int(ordered.max(initial=0)) + 2))
        self._sorted = (order, ordered, counts[order], starts)

    def candidates(self, term: str, cutoff: float) -> list[str]:
        """Words within two characters of `term`'s length whose difflib `quick_ratio` with it
        can reach `cutoff`, in group order. The bound (shared character counts, bucketed) is
        never below quick_ratio, so difflib on these finds exactly what it finds on all."""
        if self._sorted is None:
            self.warm()
        assert self._sorted is not None
        order, lengths, counts, starts = self._sorted
        length = len(term)
        top = len(starts) - 1
        lo = int(starts[min(max(length - 2, 0), top)])
        hi = int(starts[min(length + 3, top)])
        if hi <= lo:
            return []
        shared = np.minimum(counts[lo:hi], _char_counts(term)).sum(axis=1)
        keep = np.flatnonzero(2.0 * shared / (lengths[lo:hi] + length) >= cutoff)
        if keep.size == 0:
            return []
        return [self[k] for k in sorted(order[lo:hi][keep].tolist())]


def _close_pool(term: str, pool: Sequence[str], cutoff: float) -> list[str]:
    if isinstance(pool, WordGroup):
        return pool.candidates(term, cutoff)
    return [v for v in pool if abs(len(v) - len(term)) <= 2]


def named_words(question: str) -> list[tuple[str, str]]:
    """(index term, word as written) for every name in the question. A period ("FY2018",
    "Q22023") is no name: documents write it their own way, and whether one covers it is the
    card's to say."""
    names: list[tuple[str, str]] = []
    periods = period_spans(question)
    for match in _NAME.finditer(question):
        word = match.group(0)
        if any(start <= match.start() and match.end() <= end for start, end in periods):
            continue
        bare = bare_name(word)
        if bare.istitle() and _SENTENCE_START.search(question[: match.start()]):
            continue  # a capital that only starts a sentence
        if bare.lower() in _POINTERS:
            continue
        names.extend((t, word) for t in terms(word) if len(t) >= MIN_NAME_LENGTH)
    return list(dict.fromkeys(names))


def is_abbreviation(word: str) -> bool:
    """True for a name written in capitals or with digits ("GDP", "API", "Q3"): the kind of
    name a question borrows from its trade rather than the one it is about ("Toyota")."""
    return bool(_ABBREVIATION.fullmatch(bare_name(word)))


def bare_name(word: str) -> str:
    """The name without a possessive ending ("Kestrel's" -> "Kestrel")."""
    return _POSSESSIVE.sub("", word)


def mentioned(term: str, vocabulary: Collection[str], by_initial: Mapping[str, list[str]] | None = None) -> bool:
    """True when the vocabulary holds the term, one of its parts, or a close spelling.
    `by_initial` (the vocabulary grouped by first character) makes the fuzzy look-up cheap."""
    if term in vocabulary:
        return True
    parts = re.findall(r"[a-z]+|\d+", term)
    if len(parts) > 1 and any(p in vocabulary for p in parts if len(p) >= MIN_NAME_LENGTH or p.isdigit()):
        return True  # a code joining letters and digits is mentioned where its number is
    if len(term) < FUZZY_MIN_LENGTH:
        return False  # one letter apart, short words are different words
    pool = by_initial.get(term[:1], []) if by_initial is not None else [v for v in vocabulary if v[:1] == term[:1]]
    close = _close_pool(term, pool, NAME_SIMILARITY)
    return bool(difflib.get_close_matches(term, close, n=1, cutoff=NAME_SIMILARITY))


def closest_spelling(term: str, vocabulary: Collection[str], by_initial: dict[str, list[str]]) -> str | None:
    """The vocabulary word `term` is a spelling slip of (a dropped or swapped letter), or None
    when the term is present, too short to correct safely, or has no close word."""
    if term in vocabulary or len(term) < FUZZY_MIN_LENGTH or not term.isalpha():
        return None
    close = _close_pool(term, by_initial.get(term[:1], []), SPELLING_SIMILARITY)
    found = difflib.get_close_matches(term, close, n=1, cutoff=SPELLING_SIMILARITY)
    return found[0] if found else None


def unmentioned_names(
    names: list[tuple[str, str]],
    vocabularies: Sequence[tuple[Collection[str], Mapping[str, list[str]] | None, dict[str, Any] | None]],
) -> list[str]:
    """The question's names (`named_words`; as written) that none of the (vocabulary,
    by_initial, cache) triples mentions; `cache` (a dict kept with the vocabulary) memoises the
    fuzzy look-ups."""

    def known(term: str, vocabulary: Collection[str], groups: Mapping[str, list[str]] | None,
              cache: dict[str, Any] | None) -> bool:
        if cache is None:
            return mentioned(term, vocabulary, groups)
        memo: dict[str, bool] = cache.setdefault("mentioned", {})
        if term not in memo:
            if len(memo) >= MAX_MEMOISED_TERMS:
                memo.clear()  # a long-running process meets ever new words (numbers, typos, names)
            memo[term] = mentioned(term, vocabulary, groups)
        return memo[term]

    return [word for term, word in names if not any(known(term, *v) for v in vocabularies)]
