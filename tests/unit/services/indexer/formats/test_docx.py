"""A Word file's pages hold what Word shows: each text box once, every footnote and endnote on
the page that cites it, and the heading numbers a reader refers to ("Section 3.2")."""

from __future__ import annotations

from typing import Any

import pytest

from services.indexer.formats.blocks import Block
from services.indexer.formats.docx_numbering import format_number
from services.indexer.formats.paginate import PAGE_CHARS, paginate
from services.indexer.pipeline import index_document
from services.navigator.index import DocumentIndex
from services.navigator.resolver import find_references, resolve
from shared.model.query import QuerySettings
from shared.model.tree import walk_tree
from tests.support import word
from tests.support.navigation import navigate


def _document() -> Any:
    import docx

    document = docx.Document()
    document.core_properties.title = "Plant manual"
    return document


def _text_boxes() -> bytes:
    document = _document()
    heading = document.add_heading("Pumps", 1)
    heading._p.append(word.text_box_run(["Keep the guard closed while the pump runs."]))
    paragraph = document.add_paragraph("Pumps are checked every week. ")
    paragraph._p.append(word.text_box_run(["The relief valve opens at 8 bar.", "It closes again at 6 bar."]))
    paragraph.add_run("The check takes ten minutes.")
    document.add_heading("Valves", 1)
    document.add_paragraph(f"Valves are checked every month. {word.FILLER}")
    return word.saved(document)


def test_a_text_box_is_read_once_and_its_anchor_keeps_its_own_text() -> None:
    indexed = index_document(_text_boxes(), "manual.docx")
    text = "\n".join(indexed.pages)
    for sentence in ("Keep the guard closed while the pump runs.", "The relief valve opens at 8 bar.",
                     "It closes again at 6 bar."):
        assert text.count(sentence) == 1
    assert "Pumps are checked every week. The check takes ten minutes." in indexed.pages[0]
    assert "The relief valve opens at 8 bar." in indexed.pages[0]  # on the page of the paragraph it sits in
    assert [n.title for n in indexed.tree.nodes] == ["Pumps", "Valves"]  # the heading is not the box's text


def _notes() -> bytes:
    document = _document()
    document.add_heading("Introduction", 1)
    document.add_paragraph(word.FILLER)
    document.add_heading("Readings", 1)
    paragraph = document.add_paragraph("The inlet pressure is 4.2 bar")
    paragraph._p.append(word.note_reference_run("footnote", 1))
    paragraph.add_run(" on average, and the outlet pressure is 6.1 bar.")
    paragraph._p.append(word.note_reference_run("footnote", 2))
    document.add_paragraph(word.FILLER)
    document.add_heading("Maintenance", 1)
    paragraph = document.add_paragraph("Seals are replaced every two years.")
    paragraph._p.append(word.note_reference_run("endnote", 1))
    word.add_notes(document, "footnote", {1: "Measured at the pump inlet with a calibrated gauge.",
                                          2: "Outlet readings are taken after the check valve."})
    word.add_notes(document, "endnote", {1: "The seal supplier recommends a shorter interval in hot climates."})
    return word.saved(document)


def test_footnotes_and_endnotes_are_on_the_page_that_cites_them() -> None:
    pages = index_document(_notes(), "manual.docx").pages
    assert len(pages) == 3
    readings, maintenance = pages[1], pages[2]
    assert "The inlet pressure is 4.2 bar[1] on average, and the outlet pressure is 6.1 bar.[2]" in readings
    assert "[1] Measured at the pump inlet with a calibrated gauge." in readings
    assert "[2] Outlet readings are taken after the check valve." in readings
    # Endnotes are numbered i, ii, iii as Word numbers them.
    assert "Seals are replaced every two years.[i]" in maintenance
    assert "[i] The seal supplier recommends a shorter interval in hot climates." in maintenance
    text = "\n".join(pages)
    assert text.count("calibrated gauge") == 1 and text.count("hot climates") == 1


def test_a_note_stays_on_the_page_of_its_mark_when_the_page_is_nearly_full() -> None:
    nearly_full = "Every reading is written down. " * ((PAGE_CHARS - 200) // 31)
    blocks = [Block(nearly_full), Block("The gauge was replaced.[1]", notes=("[1] " + "A note of some length. " * 6,))]
    pages = paginate(blocks).pages
    (page,) = [p for p in pages if "The gauge was replaced.[1]" in p]
    assert "[1] A note of some length." in page
    assert all(len(p) <= PAGE_CHARS for p in pages)


def _numbered() -> bytes:
    document = _document()
    word.add_heading_numbering(document)
    word.add_list(document, word.lettered_list(200), 200, 201)
    word.add_list(document, None, 200, 202, start_override=1)  # Word's "Restart at a"
    for level, title, body in [
        (1, "Introduction", "This manual covers the plant."), (2, "Scope", "Only the pump house is covered."),
        (1, "Design", "The plant was designed in 1998."), (1, "Equipment", "Section 3.2 lists the pumps."),
        (2, "Valves", "Each line has two valves."), (3, "Relief valves", "Relief valves open at 8 bar."),
        (2, "Pumps", "The plant has four centrifugal pumps, two on each line."),
        (3, "Seals", "Seals are replaced every two years."),
    ]:
        document.add_heading(title, level)
        document.add_paragraph(body)
    document.add_paragraph("Close the inlet valve.", style="List Number")
    document.add_paragraph("Drain the pump.", style="List Number")
    for text, num_id, level in [("Check the seals.", 201, 0), ("Look for leaks.", 201, 1), ("Feel for play.", 201, 1),
                                ("Check the bearings.", 201, 0), ("Start again.", 202, 0)]:
        word.number_paragraph(document.add_paragraph(text), num_id, level)
    return word.saved(document)


def test_heading_numbers_are_in_the_titles_and_section_references_resolve() -> None:
    indexed = index_document(_numbered(), "manual.docx")
    titles = [n.title for n in walk_tree(indexed.tree.nodes)]
    assert titles == ["1 Introduction", "1.1 Scope", "2 Design", "3 Equipment", "3.1 Valves", "3.1.1 Relief valves",
                      "3.2 Pumps", "3.2.1 Seals"]
    index = DocumentIndex.build(indexed.record, indexed.tree, indexed.pages)
    resolved = resolve(index, find_references("What does Section 3.2 say?"))
    assert [index.nodes[r.node].node.title for r in resolved] == ["3.2 Pumps"]
    result = navigate("How many pumps are described in Section 3.2?", [index], QuerySettings())
    assert result.stats.references_resolved >= 1
    (pumps,) = [n for n in walk_tree(indexed.tree.nodes) if n.title == "3.2 Pumps"]
    assert any(p.pages == [pumps.page_start] for p in result.passages)


def test_numbered_list_items_carry_their_numbers() -> None:
    text = "\n".join(index_document(_numbered(), "manual.docx").pages)
    for line in ["1. Close the inlet valve.", "2. Drain the pump.", "a) Check the seals.", "i. Look for leaks.",
                 "ii. Feel for play.", "b) Check the bearings.", "a) Start again."]:
        assert line in text.splitlines()


@pytest.mark.parametrize(("value", "fmt", "shown"), [
    (3, "decimal", "3"), (1, "lowerLetter", "a"), (27, "lowerLetter", "aa"), (14, "upperLetter", "N"),
    (4, "lowerRoman", "iv"), (1994, "upperRoman", "MCMXCIV"), (7, "decimalZero", "07"), (2, "bullet", ""),
])
def test_number_formats(value: int, fmt: str, shown: str) -> None:
    assert format_number(value, fmt) == shown


def test_a_cell_keeps_its_paragraphs_apart_and_a_nested_table_is_read_once() -> None:
    document = _document()
    document.add_paragraph("Supported platforms.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Ubuntu"
    table.cell(0, 0).add_paragraph("Debian")
    inner = table.cell(0, 1).add_table(rows=1, cols=2)
    inner.cell(0, 0).text, inner.cell(0, 1).text = "22.04", "12"
    text = "\n".join(index_document(word.saved(document), "platforms.docx").pages)
    assert "Ubuntu Debian | 22.04 | 12" in text
    assert text.count("22.04") == 1
