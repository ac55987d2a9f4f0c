"""What a page is, independent of any question: computed once per document index.

- *header*: the terms and term pairs of the page's first lines, where running heads and
  statement titles sit ("Consolidated Statements of Cash Flows");
- *listing*: the share of the page's lines that end in a page number (tables of contents and
  indexes are made of such lines, and match every question while answering none);
- *numeric*: the share of the page's tokens that are numbers (tables);
- *pairs*: the consecutive term pairs of the whole page;
- *printed number*: the page number printed on the page, when the document prints them; the
  document's offset between printed and physical numbers gives each page its printed label
  when the PDF carries none (`page_references.page_labels`), so "see page 9" resolves.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from shared.text.lexical import terms

if TYPE_CHECKING:
    from services.navigator.index import DocumentIndex

# Lines of a page read as its header.
HEADER_LINES = 4
# A line ending in a page number after dot leaders or a space ("2 Valves .... 7").
_ENDS_IN_PAGE_NUMBER = re.compile(r"(?:\.{2,}|\s)\d{1,4}$")
_BARE_NUMBER = re.compile(r"^\s*(?:page\s+)?(\d{1,4})\s*$", re.IGNORECASE)
_NUMBER_TOKEN = re.compile(r"^[$(€£]?-?[\d,.]*\d[\d,.]*%?\)?$")


def bigrams(sequence: list[str]) -> frozenset[tuple[str, str]]:
    return frozenset(zip(sequence, sequence[1:], strict=False))


@dataclass(frozen=True)
class PageProfile:
    header_terms: tuple[frozenset[str], ...]
    header_bigrams: tuple[frozenset[tuple[str, str]], ...]
    pairs: tuple[frozenset[tuple[str, str]], ...]  # consecutive term pairs of the whole page
    listing: np.ndarray  # share of lines ending in a page number, per 0-based page
    numeric: np.ndarray  # share of number tokens, per 0-based page
    printed_offset: int | None  # physical minus printed page number, when the document prints them


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _listing_line(line: str) -> bool:
    """A line of words that ends in a page number (an entry of a contents page or an index)."""
    return bool(_ENDS_IN_PAGE_NUMBER.search(line)) and any(c.isalpha() for c in line)


def _printed_number(lines: list[str]) -> int | None:
    for line in (lines[-1:] + lines[:1]) if lines else []:
        match = _BARE_NUMBER.match(line)
        if match:
            return int(match.group(1))
    return None


def build_profile(pages: list[str]) -> PageProfile:
    headers, header_pairs, page_pairs = [], [], []
    listing = np.zeros(len(pages))
    numeric = np.zeros(len(pages))
    offsets: Counter[int] = Counter()
    for number, text in enumerate(pages, start=1):
        lines = _lines(text)
        head = terms(" ".join(lines[:HEADER_LINES]))
        headers.append(frozenset(head))
        header_pairs.append(bigrams(head))
        page_pairs.append(bigrams(terms(text)))
        if lines:
            listing[number - 1] = sum(1 for line in lines if _listing_line(line)) / len(lines)
        tokens = text.split()
        if tokens:
            numeric[number - 1] = sum(1 for t in tokens if _NUMBER_TOKEN.match(t)) / len(tokens)
        printed = _printed_number(lines)
        if printed is not None:
            offsets[number - printed] += 1
    offset = None
    if offsets:
        value, count = offsets.most_common(1)[0]
        # A printed numbering is trusted when it accounts for a fair share of the pages.
        if count >= max(3, len(pages) // 5):
            offset = value
    return PageProfile(tuple(headers), tuple(header_pairs), tuple(page_pairs), listing, numeric, offset)


def page_profile(index: DocumentIndex) -> PageProfile:
    return index.derive("page_profile", lambda: build_profile(index.pages))
