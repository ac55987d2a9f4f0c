"""Printed page labels: the numbers a reader sees in a page's header or footer ("F-12",
"iv", "Page 7 of 40"), so a citation of physical page 53 can also be shown as "page 51".

A PDF's own /PageLabels are used as given (see extract.py). Without them, the labels are read
from page-number lines at the page edges, and only when they are consistent: runs of pages
whose printed number advances with the physical page. A number that does not fit its run (a
figure label, a year in a footer) is ignored; pages of no run get no label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.indexer.furniture import EDGE_LINES

# A line that is only a page number: "12", "- 12 -", "Page 12", "12 of 40", "12 | Annual review",
# "iv", "F-12" (a counter with a letter prefix, as financial statements' pages are numbered).
_PAGE_LINE = re.compile(
    r"^(?:page\s+)?[-–—]?\s*(?P<prefix>[A-Z]{1,2}-)?(?P<number>\d{1,4}|[ivxlc]{1,7})\s*[-–—]?"
    r"(?:\s*(?:of|/)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
# A run must cover this many numbered pages before its numbers are believed (two pages may
# agree by chance; three in step rarely do), and runs must label this share of the document.
_MIN_RUN_PAGES = 3
_MIN_LABELLED_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class _Printed:
    page: int  # 0-based physical page
    value: int
    prefix: str
    roman: bool
    upper: bool


def _roman_value(text: str) -> int | None:
    text = text.lower()
    total = 0
    for i, ch in enumerate(text):
        value = _ROMAN[ch]
        total += -value if i + 1 < len(text) and _ROMAN[text[i + 1]] > value else value
    # Only canonical numerals: "il" or "vv" are words or noise, not page numbers.
    return total if 0 < total < 400 and _to_roman(total) == text else None


def _to_roman(value: int) -> str:
    out = []
    for number, letters in ((100, "c"), (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while value >= number:
            out.append(letters)
            value -= number
    return "".join(out)


def _printed_number(page_index: int, text: str) -> _Printed | None:
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    edges = lines[-EDGE_LINES:][::-1] + lines[:EDGE_LINES] if len(lines) > 2 * EDGE_LINES else lines[::-1]
    for line in edges:
        match = _PAGE_LINE.match(line)
        if match is None:
            continue
        number = match["number"]
        if number.isdigit():
            return _Printed(page_index, int(number), (match["prefix"] or "").upper(), False, False)
        roman = _roman_value(number)
        if roman is not None and not match["prefix"]:
            return _Printed(page_index, roman, "", True, number.isupper())
    return None


def _label(printed: _Printed, value: int) -> str:
    if printed.roman:
        numeral = _to_roman(value)
        return numeral.upper() if printed.upper else numeral
    return f"{printed.prefix}{value}"


def _runs(numbers: list[_Printed]) -> list[list[_Printed]]:
    """Consecutive numbered pages of one style whose value minus page index stays the same."""
    runs: list[list[_Printed]] = []
    for printed in numbers:
        if runs and _continues(runs[-1][-1], printed):
            runs[-1].append(printed)
        elif len(runs) >= 2 and len(runs[-1]) == 1 and _continues(runs[-2][-1], printed):
            # A stray number (a table's last cell) between two numbered pages of one run.
            runs.pop()
            runs[-1].append(printed)
        else:
            runs.append([printed])
    return runs


def _continues(last: _Printed, printed: _Printed) -> bool:
    return (last.prefix, last.roman) == (printed.prefix, printed.roman) and (
        printed.value - last.value == printed.page - last.page
    )


def footer_page_labels(pages: list[str]) -> list[str]:
    """One label per physical page from page-number lines at the page edges, '' for a page
    outside every consistent run; [] when the numbers are not consistent enough to trust."""
    numbers = [p for p in (_printed_number(i, text) for i, text in enumerate(pages)) if p is not None]
    labels = [""] * len(pages)
    for run in _runs(numbers):
        if len(run) < _MIN_RUN_PAGES:
            continue
        first, last = run[0], run[-1]
        # Unnumbered pages inside a run (a chapter opening, a full-page figure) take its count.
        for page in range(first.page, last.page + 1):
            value = first.value + page - first.page
            if value > 0:
                labels[page] = _label(first, value)
    labelled = sum(1 for label in labels if label)
    if not pages or labelled < _MIN_LABELLED_SHARE * len(pages):
        return []
    return labels
