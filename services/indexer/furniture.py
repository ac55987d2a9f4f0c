"""Running headers and footers: lines repeated at the top or bottom of many pages.

They must never become section titles, and they must not make a title look "found" on a page.
"""

from __future__ import annotations

import re
from collections import defaultdict

from shared.text.normalize import normalize

# Counters (page numbers) only: "1.2" in a numbered heading is part of its identity.
_DIGITS = re.compile(r"(?<![\d.])\d+(?![\d.])")
_PAGE_NUMBER = re.compile(r"^(page\s*)?[\divxlc]{1,6}(\s*(of|/)\s*\d+)?$|^[-–]\s*\d+\s*[-–]$", re.I)
EDGE_LINES = 3  # lines at the top and at the bottom of a page where furniture is looked for
_EDGE_LINES = EDGE_LINES


def line_key(line: str) -> str:
    """Identity of a line for repetition counting: page numbers and counters blanked."""
    return _DIGITS.sub("#", normalize(line))


def is_page_number(line: str) -> bool:
    return bool(_PAGE_NUMBER.match(line.strip()))


def _edge_lines(page: str) -> list[str]:
    lines = [ln for ln in page.split("\n") if ln.strip()]
    if len(lines) <= 2 * _EDGE_LINES:
        return lines
    return lines[:_EDGE_LINES] + lines[-_EDGE_LINES:]


def repetition_threshold(page_count: int) -> int:
    # A line on three pages' edges is furniture in any document long enough to have chapters;
    # short documents need it on most pages.
    return 3 if page_count >= 8 else max(2, -(-page_count * 6 // 10))


def find_furniture(pages: list[str]) -> frozenset[str]:
    """Keys (see line_key) of lines repeated at the top or bottom edge of several pages.

    A running header or footer recurs on nearby pages (every page, or every other page in
    two-sided layouts); a section title that merely recurs ("Operating limits" in every
    chapter) is pages apart, and is not furniture.
    """
    seen: dict[str, list[int]] = defaultdict(list)
    for number, page in enumerate(pages, start=1):
        for key in {line_key(ln) for ln in _edge_lines(page)}:
            seen[key].append(number)
    threshold = repetition_threshold(len(pages))
    return frozenset(
        key
        for key, where in seen.items()
        if len(where) >= threshold
        and key.strip("# ")
        and min(b - a for a, b in zip(where, where[1:], strict=False)) <= 2
    )


def is_furniture(line: str, furniture: frozenset[str]) -> bool:
    return is_page_number(line) or line_key(line) in furniture


def strip_furniture(lines: list[str], furniture: frozenset[str]) -> list[str]:
    """The lines without running headers, footers and page numbers; only the lines at the
    page edges are checked, as furniture is only ever counted there."""
    if len(lines) <= 2 * _EDGE_LINES:
        return [ln for ln in lines if not is_furniture(ln, furniture)]
    head = [ln for ln in lines[:_EDGE_LINES] if not is_furniture(ln, furniture)]
    tail = [ln for ln in lines[-_EDGE_LINES:] if not is_furniture(ln, furniture)]
    return head + lines[_EDGE_LINES:-_EDGE_LINES] + tail


def content_lines(page: str, furniture: frozenset[str]) -> list[str]:
    """Non-empty, stripped lines of a page without running headers, footers and page numbers."""
    return strip_furniture([ln.strip() for ln in page.split("\n") if ln.strip()], furniture)
