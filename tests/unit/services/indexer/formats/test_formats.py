"""DOCX, HTML, Markdown and text files become trees from their own headings, with pages that
citations point at; bad files get one-line reasons, as bad PDFs do."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.indexer.errors import (
    CorruptDocumentError,
    DocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    TooManyPartsError,
    UnsupportedFormatError,
)
from services.indexer.formats.blocks import Block
from services.indexer.formats.paginate import PAGE_CHARS, paginate
from services.indexer.pipeline import IndexOptions, index_document
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import BuilderName
from shared.model.formats import DocumentFormat, sniff_format
from shared.model.query import QuerySettings
from shared.model.tree import walk_tree
from tests.support import formats
from tests.support.query.documents import SECTIONS
from treerag.cli import main
from treerag.engine import QueryEngine

EXPECTED_FORMAT = {
    "guide.docx": DocumentFormat.DOCX,
    "guide.html": DocumentFormat.HTML,
    "guide.md": DocumentFormat.MARKDOWN,
    "guide.txt": DocumentFormat.TEXT,
}


@pytest.mark.parametrize("name", list(formats.GUIDES))
def test_headings_become_the_tree_and_each_fact_is_on_its_sections_page(name: str) -> None:
    indexed = index_document(formats.GUIDES[name](), name, IndexOptions())
    record = indexed.record
    assert record.format == EXPECTED_FORMAT[name]
    assert record.builder == BuilderName.OUTLINE
    assert record.title == formats.TITLE
    chapters = [n for n in indexed.tree.nodes if n.title[0].isdigit()]
    assert [c.title for c in chapters] == [f"{number} {chapter}" for number, chapter, _ in SECTIONS]
    for chapter, (_, _, sections) in zip(chapters, SECTIONS, strict=True):
        assert [s.title for s in chapter.children] == [f"{label} {title}" for label, title, _ in sections]
        for node, (_, _, fact) in zip(chapter.children, sections, strict=True):
            assert fact in indexed.pages[node.page_start - 1]  # the section's page holds its text
    nodes = list(walk_tree(indexed.tree.nodes))
    assert all(n.verified for n in nodes)
    assert all(len(page) <= PAGE_CHARS for page in indexed.pages)


def test_markup_that_is_not_text_stays_out() -> None:
    html = index_document(formats.guide_html(), "guide.html").pages
    assert not any("never indexed" in p or "About" in p or "color: red" in p for p in html)
    assert any("Platform | Minimum version" in p for p in html)  # a table row is one line
    markdown = index_document(formats.guide_markdown(), "guide.md")
    assert "# not a heading: a comment in code" in markdown.pages[-1]  # code is text, not a heading
    assert "Welcome to the guide." in markdown.pages[0]  # emphasis marks removed
    assert "Ubuntu | 22.04" in index_document(formats.guide_docx(), "guide.docx").pages[-1]


@pytest.mark.parametrize("name", list(formats.GUIDES))
async def test_a_question_is_answered_citing_the_page_of_the_section(name: str, tmp_path: Path) -> None:
    indexed = index_document(formats.GUIDES[name](), name)
    repository = EmbeddedRepository(tmp_path / "store")
    await repository.put_indexed(indexed)
    result = await QueryEngine(repository).ask("What does error code 41 mean?", None, QuerySettings())
    assert not result.answer.abstained
    (section,) = [n for n in walk_tree(indexed.tree.nodes) if n.title == "3.2 Error codes"]
    assert result.answer.citations[0].file_name == name
    assert result.answer.citations[0].pages == [section.page_start]
    assert "licence key has expired" in result.answer.answer


def test_long_sections_are_cut_into_pages_at_paragraphs_and_headings_go_with_their_text() -> None:
    paragraph = "Each valve is tested once a year and the result is written down. " * 12  # ~780 chars
    # Three paragraphs nearly fill a page: the sub-heading after them would end that page.
    blocks = [Block("Valves", 1), Block("Inspection", 2), *[Block(paragraph) for _ in range(3)], Block("Test rig", 3),
              *[Block(paragraph) for _ in range(4)], Block("Pumps", 1), Block("Pumps run all day.")]
    paginated = paginate(blocks)
    assert all(len(page) <= PAGE_CHARS for page in paginated.pages)
    starts = {entry.title: entry.page for entry in paginated.outline}
    test_rig_page = paginated.pages[starts["Test rig"] - 1].split("\n")
    # On the page with its text, never left alone at the bottom of the page before.
    assert "Test rig" in test_rig_page and test_rig_page[-1] != "Test rig"
    assert paginated.pages[starts["Pumps"] - 1].startswith("Pumps")  # a top-level heading opens its page
    assert (starts["Valves"], starts["Inspection"], starts["Test rig"]) == (1, 1, 2)
    assert starts["Pumps"] == len(paginated.pages)


def test_a_paragraph_longer_than_a_page_is_cut_at_sentence_ends() -> None:
    sentence = "The pressure is logged every minute by the controller. "
    paginated = paginate([Block(sentence * 200)])
    assert len(paginated.pages) > 1
    assert all(len(p) <= PAGE_CHARS and p.endswith(".") for p in paginated.pages)


BAD_FILES = [
    ("broken.docx", lambda: b"PK\x03\x04 not really a zip", CorruptDocumentError, "DOCX file is truncated or corrupt"),
    ("truncated.docx", lambda: formats.guide_docx()[:3000], CorruptDocumentError, "truncated or corrupt"),
    ("nodoc.docx", formats.zip_without_document, CorruptDocumentError, "no word/document.xml"),
    ("halfxml.docx", formats.docx_with_broken_xml, CorruptDocumentError, "not well-formed XML"),
    ("locked.docx", lambda: formats.ole_file(encrypted=True), EncryptedDocumentError, "password"),
    ("old.docx", lambda: formats.ole_file(encrypted=False), UnsupportedFormatError, "legacy Word .doc"),
    ("empty.md", lambda: b"", EmptyDocumentError, "Markdown file has no text"),
    ("empty.docx", lambda: b"", EmptyDocumentError, "DOCX file has no text"),
    ("blank.md", lambda: b"\n\n   \n", EmptyDocumentError, "Markdown file has no text"),
    ("scripts.html", lambda: b"<html><script>x()</script></html>", EmptyDocumentError, "HTML file has no text"),
    ("binary.txt", lambda: b"\x00\x01\x02" * 100, CorruptDocumentError, "binary data, not text"),
    ("mystery", lambda: bytes(range(256)) * 4, UnsupportedFormatError, "not a supported document"),
]


@pytest.mark.parametrize(("name", "make", "error", "phrase"), BAD_FILES)
def test_bad_file_gets_a_specific_one_line_reason(name, make, error, phrase) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as caught:
        index_document(make(), name, IndexOptions())
    message = str(caught.value)
    assert phrase in message and "\n" not in message
    assert isinstance(caught.value, DocumentError)


def test_page_limit_applies_to_converted_documents() -> None:
    with pytest.raises(TooManyPartsError, match=r"Markdown file makes 10 pages, over the limit of 2; raise the limit"):
        index_document(formats.guide_markdown(), "guide.md", IndexOptions(max_pages=2))


def test_format_comes_from_the_name_then_the_bytes_then_the_content_type() -> None:
    assert sniff_format(b"hello", "notes.pdf") is DocumentFormat.PDF  # reported as a bad PDF, not guessed
    assert sniff_format(b"%PDF-1.7 ...", "upload") is DocumentFormat.PDF
    assert sniff_format(formats.guide_docx(), "upload.bin") is DocumentFormat.DOCX
    assert sniff_format(b"<!doctype html><html><p>x</p></html>", "") is DocumentFormat.HTML
    assert sniff_format(b"# Title\n\ntext", "", "text/markdown") is DocumentFormat.MARKDOWN
    assert sniff_format("Grüße, plain text".encode(), "") is DocumentFormat.TEXT
    assert sniff_format(bytes(range(256)), "") is None
    assert sniff_format(b"PK\x03\x04 some other archive", "") is None


def test_cli_indexes_every_format_and_reports_bad_files(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for name, make in formats.GUIDES.items():
        paths.append(tmp_path / name)
        paths[-1].write_bytes(make())
    bad = tmp_path / "locked.docx"
    bad.write_bytes(formats.ole_file(encrypted=True))
    code = main(["index", *map(str, [*paths, bad]), "--store", str(tmp_path / "store")])
    out, err = capsys.readouterr()
    assert code == 1
    for name in formats.GUIDES:
        assert f"{name}: " in out and "outline tree" in out
    (error,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert "locked.docx" in error and "encrypted with a password" in error
