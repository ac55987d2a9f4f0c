"""What a page is, independent of any question, read from the page analysis stored with the
document (`shared/text/page_analysis.py`, where the rules below live):

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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from shared.text.page_analysis import PageAnalysis
from shared.text.term_ids import Ragged, Vocabulary

if TYPE_CHECKING:
    from services.navigator.index import DocumentIndex


def bigrams(sequence: list[str]) -> frozenset[tuple[str, str]]:
    return frozenset(zip(sequence, sequence[1:], strict=False))


class _RowSets(Sequence[frozenset]):
    """The term set (or term-pair set) of each row of a `Ragged`, made on first read: a query
    reads them for its few candidate pages only."""

    def __init__(self, rows: Ragged, vocabulary: Vocabulary, pairs: bool) -> None:
        self._rows, self._vocabulary, self._pairs = rows, vocabulary, pairs
        self._made: dict[int, frozenset] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, row: int) -> frozenset:  # type: ignore[override]
        made = self._made.get(row)
        if made is None:
            words = self._vocabulary.terms_of(self._rows.row(row))
            made = self._made[row] = bigrams(words) if self._pairs else frozenset(words)
        return made


@dataclass(frozen=True)
class PageProfile:
    header_terms: Sequence[frozenset[str]]
    header_bigrams: Sequence[frozenset[tuple[str, str]]]
    pairs: Sequence[frozenset[tuple[str, str]]]  # consecutive term pairs of the whole page
    listing: np.ndarray  # share of lines ending in a page number, per 0-based page
    numeric: np.ndarray  # share of number tokens, per 0-based page
    printed_offset: int | None  # physical minus printed page number, when the document prints them


def build_profile(analysis: PageAnalysis) -> PageProfile:
    printed = analysis.printed
    shown = np.flatnonzero(printed >= 0)
    offsets = Counter((shown + 1 - printed[shown]).tolist())  # in page order: ties go to the first
    offset = None
    if offsets:
        value, count = offsets.most_common(1)[0]
        # A printed numbering is trusted when it accounts for a fair share of the pages.
        if count >= max(3, analysis.page_count // 5):
            offset = int(value)
    vocabulary = analysis.vocabulary
    return PageProfile(
        header_terms=_RowSets(analysis.headers, vocabulary, pairs=False),
        header_bigrams=_RowSets(analysis.headers, vocabulary, pairs=True),
        pairs=_RowSets(analysis.pages, vocabulary, pairs=True),
        listing=analysis.listing, numeric=analysis.numeric, printed_offset=offset,
    )


def page_profile(index: DocumentIndex) -> PageProfile:
    return index.derive("page_profile", lambda: build_profile(index.analysis))
