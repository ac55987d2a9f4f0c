"""Readable answer sentences: context sentences cut where the page's layout ends a line on
purpose (a heading, a running header, a bullet, a table row), fragments that are only a heading
or only symbols recognised, and over-long sentences shortened at a clause boundary.

The layout breaks themselves ("seams") are one rule shared with verification:
`shared/text/seams.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from shared.text.seams import (
    CLOSED,
    HEADING_WORDS,
    Seam,
    is_symbolic,
    page_seams,
    split_at_seams,
)

__all__ = ["MAX_ANSWER_SENTENCE_WORDS", "Seam", "is_heading_only", "is_symbolic", "page_seams", "shorten",
           "split_at_seams"]

# Answer sentences longer than this are cut to their best run of clauses.
MAX_ANSWER_SENTENCE_WORDS = 50

_CLAUSE_END = re.compile(r"(?<=[,;:])\s+|\s+(?=[—–]\s)|\s+(?=\()")


def is_heading_only(fragment: str) -> bool:
    """A short fragment with no closing punctuation: a title, not a statement."""
    words = fragment.split()
    return len(words) <= HEADING_WORDS and not CLOSED.search(fragment)


def shorten(sentence: str, weight_of: dict[str, float], terms_of: Callable[[str], Iterable[str]],
            limit: int = MAX_ANSWER_SENTENCE_WORDS) -> str:
    """`sentence` if it is at most `limit` words, else its run of whole clauses within `limit`
    words that holds the most question weight (earliest on ties), marked with ellipses."""
    if len(sentence.split()) <= limit:
        return sentence
    clauses = [c for c in _CLAUSE_END.split(sentence) if c]
    sizes = [len(c.split()) for c in clauses]
    term_sets = [set(terms_of(c)) for c in clauses]
    best: tuple[float, int, int] | None = None  # (-weight, start, end)
    for start in range(len(clauses)):
        used = 0
        for end in range(start, len(clauses)):
            used += sizes[end]
            if used > limit:
                break
            covered = set().union(*term_sets[start : end + 1])
            # fsum: the same total whatever order the set yields its terms in (string hashing
            # differs per process), so equal weights break ties the same way every run.
            key = (-math.fsum(weight_of.get(t, 0.0) for t in covered), start, -end)
            if best is None or key < best:
                best = key
    if best is None:  # one clause alone is over the limit
        text = " ".join(sentence.split()[:limit])
        return f"{text} …"
    _, start, neg_end = best
    text = " ".join(clauses[start : -neg_end + 1]).rstrip(",;:")
    prefix = "… " if start > 0 else ""
    suffix = " …" if -neg_end < len(clauses) - 1 else ""
    return f"{prefix}{text}{suffix}"
