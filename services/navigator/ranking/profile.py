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
    """The term set of each row of a `Ragged`, made on first read: a query reads them for its
    few candidate pages only."""

    def __init__(self, rows: Ragged, vocabulary: Vocabulary) -> None:
        self._rows, self._vocabulary = rows, vocabulary
        self._made: dict[int, frozenset] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, row: int) -> frozenset:  # type: ignore[override]
        made = self._made.get(row)
        if made is None:
            made = self._made[row] = frozenset(self._vocabulary.terms_of(self._rows.row(row)))
        return made


def pair_shares(
    rows: Ragged, vocabulary: Vocabulary, wanted: frozenset[tuple[str, str]], chosen: np.ndarray
) -> np.ndarray:
    """For each chosen row (0-based), the share of the `wanted` term pairs it holds as
    consecutive terms: `len(wanted & bigrams(row's terms)) / len(wanted)`, read off the rows'
    term ids for just these rows."""
    shares = np.zeros(len(chosen))
    if not wanted or not len(chosen):
        return shares
    width = len(vocabulary)
    wanted_keys = np.array(
        [i * width + j for i, j in ((vocabulary.id(a), vocabulary.id(b)) for a, b in wanted)
         if i is not None and j is not None], dtype=np.int64,
    )
    if not wanted_keys.size:
        return shares
    ids, owner = rows.gather(chosen)
    held = (owner[:-1] == owner[1:]) & np.isin(ids[:-1].astype(np.int64) * width + ids[1:], wanted_keys)
    positions = np.flatnonzero(held)
    if positions.size:
        pair_keys = ids[positions].astype(np.int64) * width + ids[positions + 1]
        distinct = np.unique(np.stack([owner[positions], pair_keys]), axis=1)
        shares += np.bincount(distinct[0], minlength=len(chosen))
    return shares / len(wanted)


@dataclass(frozen=True)
class PageProfile:
    header_terms: Sequence[frozenset[str]]
    headers: Ragged  # the term ids of each page's header lines, in order (for `pair_shares`)
    pages: Ragged  # the term ids of each page, in order (for `pair_shares`)
    vocabulary: Vocabulary
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
        header_terms=_RowSets(analysis.headers, vocabulary), headers=analysis.headers, pages=analysis.pages,
        vocabulary=vocabulary, listing=analysis.listing, numeric=analysis.numeric, printed_offset=offset,
    )


def page_profile(index: DocumentIndex) -> PageProfile:
    return index.derive("page_profile", lambda: build_profile(index.analysis))
