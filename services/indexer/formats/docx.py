"""DOCX (Word 2007+) into headings and paragraphs, with the standard library's zip and XML readers.

What Word shows is what is read:

- a paragraph is a heading when it, or its style, has an outline level or a "Heading N" style
  (docx_styles.py); its automatic number ("3.2", from word/numbering.xml) is written before its
  text, as it is for numbered list items (docx_numbering.py);
- a text box is read once (docx_xml.py) and its paragraphs follow the paragraph that anchors it;
- a footnote or endnote reference is its mark in the text ("[1]"), and the note's text follows
  the paragraph on the same page (docx_notes.py);
- tables become one line per row, cells separated by " | " (a nested table stays in its cell).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from io import BytesIO
from xml.etree import ElementTree

from services.indexer.errors import (
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    UnsupportedFormatError,
)
from services.indexer.formats.blocks import Block, TextDocument, one_line
from services.indexer.formats.docx_notes import Notes
from services.indexer.formats.docx_numbering import Numbering
from services.indexer.formats.docx_styles import NumberingRef, Styles, numbering_ref, outline_level, read_styles
from services.indexer.formats.docx_xml import FIX, KIND, W, child_attr, children, read_part, read_runs
from shared.model.formats import OLE_MAGIC

_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
_BLOCK_TAGS = frozenset({W + "p", W + "tbl"})
_ROW_TAGS = frozenset({W + "tr"})
_CELL_TAGS = frozenset({W + "tc"})


@dataclass(slots=True)
class _Paragraph:
    text: str
    level: int
    style: str | None
    notes: list[str] = field(default_factory=list)
    boxes: list[ElementTree.Element] = field(default_factory=list)


class _Reader:
    def __init__(self, styles: Styles, numbering: Numbering, notes: Notes) -> None:
        self.document = TextDocument()
        self._styles = styles
        self._numbering = numbering
        self._notes = notes

    def blocks(self, container: ElementTree.Element, body_only: bool = False) -> None:
        for child in children(container, _BLOCK_TAGS):
            if child.tag == W + "p":
                self._paragraph(child, body_only)
            else:
                self._table(child)

    def _numbering_ref(self, ppr: ElementTree.Element | None, style: str | None) -> NumberingRef | None:
        """The paragraph's own `w:numPr`, else its style's."""
        own = numbering_ref(ppr)
        inherited = self._styles.numbering.get(style or "")
        if own is None:
            return inherited
        if own.num_id is None and inherited is not None:
            return NumberingRef(inherited.num_id, own.level)  # a level alone: that level of the style's list
        return own

    def _read(self, paragraph: ElementTree.Element, body_only: bool) -> _Paragraph:
        ppr = paragraph.find(W + "pPr")
        style = child_attr(ppr, "pStyle")
        level = outline_level(ppr)
        if level is None:
            level = self._styles.levels.get(style or "", 0)
        # Word's navigation pane leaves text boxes out, and a cell's text stays in its row: body text.
        level = 0 if body_only else level
        # Counted even when the paragraph is empty, as Word counts it.
        label = self._numbering.label(self._numbering_ref(ppr, style), style)
        runs = read_runs(paragraph)
        read = _Paragraph("", level, style, boxes=runs.boxes)
        parts: list[str] = []
        for piece in runs.pieces:
            if isinstance(piece, str):
                parts.append(piece)
                continue
            mark, note = self._notes.cite(piece)
            if level == 0:  # a heading's title carries no mark; its note follows it
                parts.append(mark)
            if note:
                read.notes.append(note)
        text = one_line("".join(parts))
        read.text = f"{label} {text}" if label and text else text
        return read

    def _paragraph(self, element: ElementTree.Element, body_only: bool) -> None:
        paragraph = self._read(element, body_only)
        if paragraph.text:
            if paragraph.style in self._styles.titles and not self.document.title and not body_only:
                self.document.title = paragraph.text
            notes = tuple(paragraph.notes) if paragraph.level == 0 else ()
            self.document.blocks.append(Block(text=paragraph.text, level=paragraph.level, notes=notes))
        if paragraph.notes and (paragraph.level > 0 or not paragraph.text):
            self.document.blocks.append(Block(text=" ".join(paragraph.notes)))
        for box in paragraph.boxes:
            self.blocks(box, body_only=True)

    def _cell(self, cell: ElementTree.Element, notes: list[str], boxes: list[ElementTree.Element]) -> str:
        texts: list[str] = []
        for child in children(cell, _BLOCK_TAGS):
            if child.tag == W + "p":
                paragraph = self._read(child, body_only=True)
                texts.append(paragraph.text)
                notes += paragraph.notes
                boxes += paragraph.boxes
            else:
                texts += self._rows(child, notes, boxes)
        return one_line(" ".join(texts))

    def _row(self, row: ElementTree.Element, notes: list[str], boxes: list[ElementTree.Element]) -> str:
        cells = [self._cell(cell, notes, boxes) for cell in children(row, _CELL_TAGS)]
        return " | ".join(cell for cell in cells if cell)

    def _rows(self, table: ElementTree.Element, notes: list[str], boxes: list[ElementTree.Element]) -> list[str]:
        return [self._row(row, notes, boxes) for row in children(table, _ROW_TAGS)]

    def _table(self, table: ElementTree.Element) -> None:
        for row in children(table, _ROW_TAGS):
            notes: list[str] = []
            boxes: list[ElementTree.Element] = []
            line = self._row(row, notes, boxes)
            if line:
                self.document.blocks.append(Block(text=line, notes=tuple(notes)))
            elif notes:
                self.document.blocks.append(Block(text=" ".join(notes)))
            for box in boxes:
                self.blocks(box, body_only=True)


def _open(data: bytes) -> zipfile.ZipFile:
    if data.startswith(OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            raise EncryptedDocumentError(KIND)
        raise UnsupportedFormatError("a legacy Word .doc file; save it as DOCX or export it to PDF")
    if not data:
        raise EmptyDocumentError(KIND)
    try:
        return zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocumentError(KIND, "not a readable ZIP archive", FIX) from exc


def read_docx(data: bytes) -> TextDocument:
    with _open(data) as archive:
        root = read_part(archive, "word/document.xml")
        if root is None:
            raise CorruptDocumentError(KIND, "no word/document.xml in the archive", FIX)
        styles = read_styles(read_part(archive, "word/styles.xml"))
        numbering = Numbering(read_part(archive, "word/numbering.xml"))
        notes = Notes(read_part(archive, "word/footnotes.xml"), read_part(archive, "word/endnotes.xml"),
                      read_part(archive, "word/settings.xml"))
        core = read_part(archive, "docProps/core.xml")
    reader = _Reader(styles, numbering, notes)
    body = root.find(W + "body")
    if body is not None:
        reader.blocks(body)
    document = reader.document
    if core is not None:
        meta_title = one_line(core.findtext(_DC_TITLE) or "")
        if meta_title:
            document.title = meta_title
    if not document.blocks:
        raise EmptyDocumentError(KIND)
    return document
