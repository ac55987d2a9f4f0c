"""Every kind of bad input gets a specific, one-line reason; scanned PDFs still get a tree."""

from __future__ import annotations

import pytest

from services.indexer.errors import (
    CorruptPdfError,
    EncryptedPdfError,
    NotAPdfError,
    PdfError,
    TooManyPagesError,
)
from services.indexer.pipeline import IndexOptions, index_pdf
from shared.model.documents import BuilderName
from shared.model.tree import walk_tree
from tests.support import pdfs

CASES = [
    (pdfs.not_a_pdf, NotAPdfError, "not a PDF"),
    (lambda: b"", NotAPdfError, "empty"),
    (pdfs.truncated_pdf, CorruptPdfError, "truncated or corrupt"),
    (pdfs.corrupt_pdf, CorruptPdfError, "truncated or corrupt"),
    (pdfs.encrypted_pdf, EncryptedPdfError, "password"),
    # pdfium refuses an empty page tree as it refuses a corrupt file, and says so.
    (pdfs.zero_page_pdf, CorruptPdfError, "empty page tree"),
]


@pytest.mark.parametrize(("make", "error", "phrase"), CASES)
def test_bad_pdf_raises_specific_one_line_error(make, error, phrase) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as caught:
        index_pdf(make(), "bad.pdf", IndexOptions())
    message = str(caught.value)
    assert phrase in message
    assert "\n" not in message
    assert isinstance(caught.value, PdfError)


def test_page_limit_is_configurable() -> None:
    data = pdfs.plain_pdf(pages=6)
    with pytest.raises(TooManyPagesError) as caught:
        index_pdf(data, "long.pdf", IndexOptions(max_pages=5))
    assert "6 pages" in str(caught.value) and "limit of 5" in str(caught.value)
    assert index_pdf(data, "long.pdf", IndexOptions(max_pages=6)).record.page_count == 6


def test_image_only_pdf_gets_windows_and_an_ocr_warning() -> None:
    indexed = index_pdf(pdfs.image_only_pdf(pages=7), "scan.pdf", IndexOptions(window_pages=3))
    assert indexed.record.builder == BuilderName.WINDOWS
    assert any("OCR" in w for w in indexed.record.warnings)
    nodes = list(walk_tree(indexed.tree.nodes))
    assert [(n.page_start, n.page_end) for n in nodes] == [(1, 3), (4, 6), (7, 7)]
    assert not any(n.verified for n in nodes)  # nothing on the page to check the title against
    assert indexed.pages == ["", "", "", "", "", "", ""]
