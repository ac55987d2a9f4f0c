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
    names: list[str] = []
    for match in _NAME.finditer(question):
        word = match.group(0)
        if word.istitle() and _SENTENCE_START.search(question[: match.start()]):
            continue  # a capital that only starts a sentence
        if word.lower().removesuffix("'s") in _POINTERS:
            continue
        names.extend(t for t in terms(word) if len(t) >= MIN_NAME_LENGTH)
    return list(dict.fromkeys(names))


def mentioned(term: str, vocabulary: Collection[str]) -> bool:
    if term in vocabulary:
        return True
    parts = re.findall(r"[a-z]+|\d+", term)
    if len(parts) > 1 and any(p in vocabulary for p in parts if len(p) >= MIN_NAME_LENGTH or p.isdigit()):
        return True  # "fy2015" is mentioned where "2015" is
    if len(term) < FUZZY_MIN_LENGTH:
        return False  # one letter apart, short words are different words ("ram", "ramp")
    close = [v for v in vocabulary if v[:1] == term[:1] and abs(len(v) - len(term)) <= 2]
    return bool(difflib.get_close_matches(term, close, n=1, cutoff=NAME_SIMILARITY))


def unmentioned_names(question: str, vocabularies: list[Collection[str]]) -> list[str]:
    """Named terms of the question that none of the vocabularies mentions."""
    return [n for n in named_terms(question) if not any(mentioned(n, v) for v in vocabularies)]
