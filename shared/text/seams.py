"""Where a page's layout cuts its text: line breaks that end a heading, a running header, a
bullet item or a table row ("seams"), found again inside text whose line breaks are gone.

Sentence splitting reads a paragraph as running text; these seams put back the cuts the page
makes on purpose, so a heading is not read as the start of the sentence below it. Answers use
them to show a readable fragment; verification uses them to cut a page into the statements a
sentence is checked against. One rule for both.
"""

from __future__ import annotations

import re
import statistics
from functools import lru_cache

# A line of at most this many words without closing punctuation, clearly shorter than the
# page's running lines, is a heading or running header, not part of a sentence.
HEADING_WORDS = 10
SHORT_LINE_SHARE = 0.7
# Words either side of a break that identify it inside a flattened sentence.
SEAM_WORDS = 3
# Below this share of plain words a fragment is a table row, code or a command line.
MIN_WORD_SHARE = 0.4

_BULLET = re.compile(r"^(?:[•▪‣◦●■□➢►\-–*]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s")
_BULLET_INLINE = re.compile(r"\s+(?=[•▪‣◦●■➢►]\s)")
CLOSED = re.compile(r"[.!?:;][\"')\]\u201d\u2019]*$")
_PLAIN_WORD = re.compile(r"^[(\"'\u201c]*[^\W\d_]{2,}(?:['\u2019-][^\W\d_]+)*[)\"',.;:!?\u201d]*$")

Seam = tuple[tuple[str, ...], tuple[str, ...]]


def _is_short_line(words: list[str], typical: float) -> bool:
    line = " ".join(words)
    return (
        0 < len(words) <= HEADING_WORDS
        and not CLOSED.search(line)
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
    symbolic: dict[int, bool] = {}  # each line is read as the line before a break and after one

    def is_symbolic_line(k: int) -> bool:
        if k not in symbolic:
            symbolic[k] = is_symbolic(" ".join(lines[k]))
        return symbolic[k]

    seams: set[Seam] = set()
    for k, (before, after) in enumerate(zip(lines, lines[1:], strict=False)):
        hard = (
            _is_short_line(before, typical)
            or bool(_BULLET.match(" ".join(after)))
            or is_symbolic_line(k)
            or is_symbolic_line(k + 1)
            or before[-1].endswith(":")
        )
        if hard:
            seams.add((tuple(before[-SEAM_WORDS:]), tuple(after[:SEAM_WORDS])))
    return frozenset(seams)


@lru_cache(maxsize=512)
def line_breaks(page_text: str) -> frozenset[Seam]:
    """Every line break of a page, as seams: where text too long to be one sentence (a table,
    a list) is cut when its own punctuation gives no cut."""
    lines = [w for w in (line.split() for line in page_text.splitlines()) if w]
    return frozenset((tuple(a[-SEAM_WORDS:]), tuple(b[:SEAM_WORDS])) for a, b in zip(lines, lines[1:], strict=False))


def _cut_points(words: list[str], seams: list[Seam]) -> list[int]:
    """Where the seams lie in `words`: only where a seam's first word after the break is."""
    if not seams:
        return []
    starts: dict[str, list[int]] = {}
    for k in range(1, len(words)):
        starts.setdefault(words[k], []).append(k)
    cuts: set[int] = set()
    for tail, head in seams:
        # A seam may be shorter than SEAM_WORDS near the start or end of a line.
        for k in starts.get(head[0], ()) if head else range(1, len(words)):
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
