"""Printed page labels on the card: the PDF's own /PageLabels when it has them, else the page
numbers printed in footers when they advance in step with the pages, else none."""

from __future__ import annotations

import io

import pypdf
import pytest
from pypdf.constants import PageLabelStyle

from services.indexer.page_labels import footer_page_labels
from services.indexer.pipeline import index_document
from shared.model.card import CardSource, DocType
from tests.support.formats import GUIDES
from tests.support.pdfs import manual_pdf, plain_pdf


def labelled_pdf() -> bytes:
    """Six pages: a preface numbered i, ii, then the body from 1; written by pypdf."""
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(plain_pdf(6)))
    writer.set_page_label(0, 1, style=PageLabelStyle.LOWERCASE_ROMAN)
    writer.set_page_label(2, 5, style=PageLabelStyle.DECIMAL, start=1)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_a_pdfs_own_page_labels_are_kept_per_physical_page() -> None:
    card = index_document(labelled_pdf(), "labelled.pdf").record.card
    assert card is not None
    assert card.page_labels == ["i", "ii", "1", "2", "3", "4"]
    assert card.sources["page_labels"] == CardSource.LABELS


def test_without_page_labels_the_footers_page_numbers_are_read() -> None:
    data, _ = manual_pdf(chapters=2, sections=2, pages_per_section=2)  # a title page, then "Page 2", "Page 3", ...
    indexed = index_document(data, "plant.pdf")
    card = indexed.record.card
    assert card is not None
    assert card.page_labels == [""] + [str(n) for n in range(2, indexed.record.page_count + 1)]
    assert card.sources["page_labels"] == CardSource.FOOTERS
    # The title page names the document; the card keeps the record's title.
    assert card.title == indexed.record.title == "Northwind Plant Manual"
    assert card.doc_type is DocType.MANUAL and card.subject == "Northwind Plant"


def test_footer_numbers_offset_from_the_physical_pages_and_in_runs_of_styles() -> None:
    body = "Text of the page that runs on for a while.\nMore of it.\nAnd more.\nStill more.\nThe end of it.\n"
    pages = ["Cover of the book"] + [f"{body}{n}" for n in ("i", "ii", "iii")] + [f"{body}- {n} -" for n in range(1, 7)]
    assert footer_page_labels(pages) == ["", "i", "ii", "iii", "1", "2", "3", "4", "5", "6"]


def test_an_unnumbered_page_inside_a_run_takes_its_count_and_a_stray_number_is_ignored() -> None:
    body = "Running text of a chapter.\nA second line.\nA third line.\nA fourth line.\nA fifth line.\n"
    pages = [f"{body}Page {n}" for n in range(1, 9)]
    pages[3] = body + "A full-page figure without a number."
    pages[5] = body + "42"  # a table's last cell, not the page number
    assert footer_page_labels(pages) == [str(n) for n in range(1, 9)]


@pytest.mark.parametrize(
    "numbers",
    [
        ["7", "19", "3", "44", "12", "8"],  # figures and amounts, not in step with the pages
        ["1", "2", "", "", "", "", "", ""],  # two numbered pages agree by chance
    ],
)
def test_numbers_that_do_not_advance_with_the_pages_give_no_labels(numbers: list[str]) -> None:
    body = "Line one of the page.\nLine two.\nLine three.\nLine four.\nLine five.\n"
    assert footer_page_labels([body + n for n in numbers]) == []


@pytest.mark.parametrize("name", sorted(GUIDES))
def test_text_documents_get_a_card_without_page_labels(name: str) -> None:
    card = index_document(GUIDES[name](), name).record.card
    assert card is not None
    assert card.page_labels == [] and "page_labels" not in card.sources
    assert card.doc_type is DocType.GUIDE  # "Software guide", their title
    assert card.language == "en"
