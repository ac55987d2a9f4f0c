"""Scanned PDFs: pages without a text layer are recognised (TREERAG_OCR=auto, Tesseract), become a
searchable tree, and questions over them cite the right page; with OCR off they keep the warning."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from services.gateway.web.rendering import text_layer
from services.indexer.ocr import find_tesseract, parse_tsv
from services.indexer.pipeline import IndexOptions, index_document
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import BuilderName, IndexedDocument
from shared.model.query import QuerySettings
from shared.model.text_layer import Box
from shared.model.tree import walk_tree
from tests.support import pdfs
from tests.support.query.documents import SECTIONS, software_guide_pdf
from treerag.engine import QueryEngine


@pytest.fixture(scope="module")
def scanned_guide() -> IndexedDocument:
    # make test installs it (`make ocr`); a missing engine is a failure here, not a skip.
    assert find_tesseract(), "tesseract is not installed: run `make ocr` (Debian's tesseract-ocr)"
    return index_document(pdfs.scanned_copy(software_guide_pdf(), dpi=200), "scanned-guide.pdf", IndexOptions())


def test_scanned_pdf_becomes_a_tree_from_its_printed_headings(scanned_guide: IndexedDocument) -> None:
    record = scanned_guide.record
    assert record.builder == BuilderName.LAYOUT  # the scan lost the outline: headings come from sizes
    assert any("recognised by OCR" in w for w in record.warnings)
    titles = {n.title: n for n in walk_tree(scanned_guide.tree.nodes)}
    for number, chapter, sections in SECTIONS:
        assert f"{number} {chapter}" in titles
        for label, title, fact in sections:
            node = titles[f"{label} {title}"]
            assert node.verified and node.level == 2
            # Each section is printed on its own page, after the title page.
            assert fact.split()[1] in scanned_guide.pages[node.page_start - 1]


async def test_a_question_over_the_scan_cites_the_same_page_as_over_the_original(
    scanned_guide: IndexedDocument, tmp_path: Path
) -> None:
    repository = EmbeddedRepository(tmp_path / "store")
    await repository.put_indexed(scanned_guide)
    result = await QueryEngine(repository).ask("What does error code 41 mean?", None, QuerySettings())
    assert not result.answer.abstained
    assert result.answer.citations[0].file_name == "scanned-guide.pdf"
    assert result.answer.citations[0].pages == [7]  # as over the born-digital guide
    assert "licence key has expired" in result.answer.answer


def test_each_recognised_page_keeps_its_words_where_they_are_printed(scanned_guide: IndexedDocument) -> None:
    # The scan's words, boxed by Tesseract, lie where the born-digital guide prints them (pdfium).
    assert [layer.page for layer in scanned_guide.text_layers] == list(range(1, 8))
    recognised = scanned_guide.text_layers[6]
    printed = text_layer(software_guide_pdf(), 7)
    assert math.isclose(recognised.aspect, printed.aspect, rel_tol=0.01)
    line = next(line for line in recognised.lines if "licence" in line.text)
    assert line.text == next(p.text for p in printed.lines if "licence" in p.text)
    words = {word.text: word.box for word in next(p for p in printed.lines if "licence" in p.text).words}
    for word in line.words:
        assert abs(word.box.left - words[word.text].left) < 0.01 and abs(word.box.top - words[word.text].top) < 0.01
    assert line.box == Box.around([word.box for word in line.words])


def test_ocr_off_keeps_the_warning_and_the_page_windows() -> None:
    indexed = index_document(pdfs.scanned_copy(software_guide_pdf(), dpi=100), "scan.pdf", IndexOptions(ocr="off"))
    assert indexed.record.builder == BuilderName.WINDOWS
    (warning,) = indexed.record.warnings
    assert warning.startswith("no text layer on 7 of 7 pages") and "run OCR first" in warning
    assert indexed.pages == [""] * 7


def test_words_are_grouped_into_lines_with_a_font_size_whatever_their_letters() -> None:
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        # A 300 dpi heading in 14 pt: "Running" has an ascender and a descender, "the" an ascender only.
        "5\t1\t1\t1\t1\t1\t100\t200\t300\t55\t96\tRunning",
        "5\t1\t1\t1\t1\t2\t420\t200\t120\t42\t95\tthe",
        "5\t1\t1\t1\t1\t3\t560\t200\t150\t30\t3\t~~",  # noise: dropped
        "5\t1\t2\t1\t1\t1\t100\t300\t200\t21\t91\tsome",
        "5\t1\t2\t1\t1\t2\t320\t300\t200\t29\t90\ttext",
    ]
    page = parse_tsv("\n".join([header, *rows]), dpi=300)
    assert page.text == "Running the\nsome text"
    heading, body = page.lines
    assert heading.size == pytest.approx(14, abs=1.0) and body.size == pytest.approx(10, abs=1.0)
    assert heading.top == pytest.approx(200 * 72 / 300)
