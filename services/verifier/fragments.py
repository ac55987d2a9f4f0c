"""Readable answer sentences: context sentences cut where the page's layout ends a line on
purpose (a heading, a running header, a bullet, a table row), fragments that are only a heading
or only symbols recognised, and over-long sentences shortened at a clause boundary.

Compressed passages have lost their line breaks, so the breaks are read from the page text as
"seams" (the words either side of a break) and found again in the flat sentence.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable
from functools import lru_cache

# A line of at most this many words without closing punctuation, clearly shorter than the
# page's running lines, is a heading or running header, not part of a sentence.
HEADING_WORDS = 10
SHORT_LINE_SHARE = 0.7
# Words either side of a break that identify it inside a flattened sentence.
SEAM_WORDS = 3
# Below this share of plain words a fragment is a table row, code or a command line.
MIN_WORD_SHARE = 0.4
# Answer sentences longer than this are cut to their best run of clauses.
MAX_ANSWER_SENTENCE_WORDS = 50

_BULLET = re.compile(r"^(?:[•▪‣◦●■□➢►\-–*]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s")
_BULLET_INLINE = re.compile(r"\s+(?=[•▪‣◦●■➢►]\s)")
_CLOSED = re.compile(r"[.!?:;][\"')\]\u201d\u2019]*$")
_CLAUSE_END = re.compile(r"(?<=[,;:])\s+|\s+(?=[—–]\s)|\s+(?=\()")
_PLAIN_WORD = re.compile(r"^[(\"'\u201c]*[^\W\d_]{2,}(?:['\u2019-][^\W\d_]+)*[)\"',.;:!?\u201d]*$")

Seam = tuple[tuple[str, ...], tuple[str, ...]]


def _is_short_line(words: list[str], typical: float) -> bool:
    line = " ".join(words)
    return (
        0 < len(words) <= HEADING_WORDS
        and not _CLOSED.search(line)
        and len(line) < SHORT_LINE_SHARE * typical
    )


def is_symbolic(text: str) -> bool:
    """A table row, code or a command line: few of its tokens are plain words, or its cells
    are separated by a vertical bar."""
    tokens = text.split()
    if len(tokens) < 4:
        return False
    if "|" in tokens:
        return True
    plain = sum(1 for t in tokens if _PLAIN_WORD.match(t))
    return plain / len(tokens) < MIN_WORD_SHARE


@lru_cache(maxsize=2048)  # the same pages are cited by many questions
def page_seams(page_text: str) -> frozenset[Seam]:
    """The line breaks of a page that end a heading, header, bullet item or table row."""
    lines = [line.split() for line in page_text.splitlines()]
    lines = [w for w in lines if w]
    if len(lines) < 2:
        return frozenset()
    typical = statistics.median(len(" ".join(w)) for w in lines)
    seams: set[Seam] = set()
    for before, after in zip(lines, lines[1:], strict=False):
        hard = (
            _is_short_line(before, typical)
            or bool(_BULLET.match(" ".join(after)))
            or is_symbolic(" ".join(before))
            or is_symbolic(" ".join(after))
            or before[-1].endswith(":")
        )
        if hard:
            seams.add((tuple(before[-SEAM_WORDS:]), tuple(after[:SEAM_WORDS])))
    return frozenset(seams)


def _cut_points(words: list[str], seams: Iterable[Seam]) -> list[int]:
    cuts: set[int] = set()
    for tail, head in seams:
        # A seam may be shorter than SEAM_WORDS near the start or end of a line.
        for k in range(1, len(words)):
            if words[k : k + len(head)] == list(head) and words[max(0, k - len(tail)) : k] == list(tail)[-k:]:
                cuts.add(k)
    return sorted(cuts)


def split_at_seams(sentence: str, seams: frozenset[Seam]) -> list[str]:
    """`sentence` cut at the page's layout breaks and at inline bullet markers."""
    pieces: list[str] = []
    for part in _BULLET_INLINE.split(sentence):
        words = part.split()
        if words and _BULLET.match(f"{words[0]} "):
            words = words[1:]  # the marker is layout, not part of the statement
        if not words:
            continue
        relevant = [s for s in seams if s[1] and s[1][0] in part]
        bounds = [0, *_cut_points(words, relevant), len(words)]
        pieces.extend(" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:], strict=False) if b > a)
    return pieces


def is_heading_only(fragment: str) -> bool:
    """A short fragment with no closing punctuation: a title, not a statement."""
    words = fragment.split()
    return len(words) <= HEADING_WORDS and not _CLOSED.search(fragment)


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
            key = (-sum(weight_of.get(t, 0.0) for t in covered), start, -end)
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
