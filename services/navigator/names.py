"""Names in a question (proper nouns, acronyms) that a document must mention to answer it.

A question about "Sturges' rule" cannot be answered by a document that never says "Sturges",
however well its other words match. Spelling slips ("Netfilx") still count as mentions.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection

from services.navigator.lexical import terms

# A named term this similar to a document word counts as mentioned (typos, transpositions).
NAME_SIMILARITY = 0.8
# A question term absent from a document is read as this close a document word (a typo).
SPELLING_SIMILARITY = 0.85
MIN_NAME_LENGTH = 3
FUZZY_MIN_LENGTH = 5

# Capitalised words that point into a document rather than name something in it.
_POINTERS = frozenset(
    "section sections chapter chapters article articles table tables figure figures fig appendix "
    "item items part parts page pages step steps note notes example examples question answer".split()
)
_NAME = re.compile(r"\b(?:[A-Z][a-z]+(?:'s)?|[A-Z][A-Z0-9]+)\b")
_SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s*|\(\s*|[\"'`]\s*)$")


def named_terms(question: str) -> list[str]:
    """Capitalised words inside a sentence and acronyms, as index terms."""
    return [term for term, _ in named_words(question)]


def named_words(question: str) -> list[tuple[str, str]]:
    """(index term, word as written) for every name in the question."""
    names: list[tuple[str, str]] = []
    for match in _NAME.finditer(question):
        word = match.group(0)
        if word.istitle() and _SENTENCE_START.search(question[: match.start()]):
            continue  # a capital that only starts a sentence
        if word.lower().removesuffix("'s") in _POINTERS:
            continue
        names.extend((t, word) for t in terms(word) if len(t) >= MIN_NAME_LENGTH)
    return list(dict.fromkeys(names))


def mentioned(term: str, vocabulary: Collection[str], by_initial: dict[str, list[str]] | None = None) -> bool:
    """True when the vocabulary holds the term, one of its parts, or a close spelling.
    `by_initial` (the vocabulary grouped by first character) makes the fuzzy look-up cheap."""
    if term in vocabulary:
        return True
    parts = re.findall(r"[a-z]+|\d+", term)
    if len(parts) > 1 and any(p in vocabulary for p in parts if len(p) >= MIN_NAME_LENGTH or p.isdigit()):
        return True  # "fy2015" is mentioned where "2015" is
    if len(term) < FUZZY_MIN_LENGTH:
        return False  # one letter apart, short words are different words ("ram", "ramp")
    pool = by_initial.get(term[:1], []) if by_initial is not None else [v for v in vocabulary if v[:1] == term[:1]]
    close = [v for v in pool if abs(len(v) - len(term)) <= 2]
    return bool(difflib.get_close_matches(term, close, n=1, cutoff=NAME_SIMILARITY))


def closest_spelling(term: str, vocabulary: Collection[str], by_initial: dict[str, list[str]]) -> str | None:
    """The vocabulary word `term` is a spelling slip of ("advertsing" -> "advertising"), or None
    when the term is present, too short to correct safely, or has no close word."""
    if term in vocabulary or len(term) < FUZZY_MIN_LENGTH or not term.isalpha():
        return None
    close = [v for v in by_initial.get(term[:1], []) if abs(len(v) - len(term)) <= 2]
    found = difflib.get_close_matches(term, close, n=1, cutoff=SPELLING_SIMILARITY)
    return found[0] if found else None


def unmentioned_names(
    question: str, vocabularies: list[tuple[Collection[str], dict[str, list[str]] | None, dict | None]]
) -> list[str]:
    """Names in the question (as written) that none of the (vocabulary, by_initial, cache)
    triples mentions; `cache` (a dict kept with the vocabulary) memoises the fuzzy look-ups."""

    def known(term: str, vocabulary: Collection[str], groups: dict[str, list[str]] | None, cache: dict | None) -> bool:
        if cache is None:
            return mentioned(term, vocabulary, groups)
        memo = cache.setdefault("mentioned", {})
        if term not in memo:
            memo[term] = mentioned(term, vocabulary, groups)
        return memo[term]

    return [word for term, word in named_words(question) if not any(known(term, *v) for v in vocabularies)]
