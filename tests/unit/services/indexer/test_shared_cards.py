"""Cards of the real filings in ../shared/data/pdfs/financebench (skipped with a reason when the
folder is absent): nearly every filing gets its form and its fiscal year, read from the cover.

The file names are the ground truth here (bench/card_accuracy.py); the figures are in
docs/indexing.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.card_accuracy import read_cards, summarise

pytestmark = pytest.mark.shared_data

MIN_SHARE = 0.9


def test_nearly_every_filing_gets_its_form_and_fiscal_year(shared_data: Path) -> None:
    rows = read_cards(shared_data / "pdfs" / "financebench")
    assert len(rows) >= 140  # every filing's name parses
    figures = summarise(rows)
    assert figures["has_doc_type"] >= MIN_SHARE and figures["has_fiscal_year"] >= MIN_SHARE
    assert figures["doc_type_agrees"] >= MIN_SHARE and figures["fiscal_year_agrees"] >= MIN_SHARE
    # The cover, not the file name, says it for most: the name is only the last resort.
    assert figures["fiscal_year_from_cover"] >= MIN_SHARE
    assert figures["has_issuer"] >= MIN_SHARE
    # The card reads the first pages only: a few milliseconds beside the text extraction itself.
    assert figures["card_ms"]["mean"] < 0.1 * figures["read_ms_mean"]
