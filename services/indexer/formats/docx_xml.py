"""What every part of a DOCX package is read with: the archive's XML parts, attributes, and the
text of runs as Word shows it.

Runs are read once each: where Word stores content twice in `mc:AlternateContent` (a text box as
a DrawingML shape in `mc:Choice` and as VML in `mc:Fallback`), only the first Choice is read, or
the Fallback when there is no Choice. A text box's paragraphs are handed back apart from the
text of the paragraph that anchors them, and a footnote or endnote reference as its place in the
text, so the reader decides where each goes.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.etree import ElementTree

from services.indexer.errors import CorruptDocumentError

KIND = "DOCX"
FIX = "open it in Word and save it again, or export it to PDF"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
# Larger XML parts are refused before they are inflated (a zip bomb costs nothing to send).
_MAX_PART_BYTES = 256 * 1024 * 1024
# Block-level and row-level wrappers whose children are read as if they stood in their place:
# content controls, custom XML and smart tags.
_WRAPPERS = frozenset({W + "sdt", W + "sdtContent", W + "customXml", W + "smartTag"})
_SPACES = frozenset({W + "tab", W + "br", W + "cr"})
_NOTE_REFERENCES = {W + "footnoteReference": "footnote", W + "endnoteReference": "endnote"}


def read_part(archive: zipfile.ZipFile, name: str) -> ElementTree.Element | None:
    """The part's XML root, None when the package has no such part."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > _MAX_PART_BYTES:
        raise CorruptDocumentError(KIND, f"{name} inflates to {info.file_size} bytes", "split the document")
    try:
        return ElementTree.fromstring(archive.read(info))
    except ElementTree.ParseError as exc:
        raise CorruptDocumentError(KIND, f"{name} is not well-formed XML: {exc}", FIX) from exc
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:  # zlib errors arrive as these
        raise CorruptDocumentError(KIND, f"{name} cannot be inflated: {exc}", FIX) from exc


def attr(element: ElementTree.Element | None, name: str = "val") -> str | None:
    return None if element is None else element.get(W + name)


def child_attr(element: ElementTree.Element | None, child: str, name: str = "val") -> str | None:
    """`w:val` (or `name`) of the element's `w:child`, None when either is missing."""
    return None if element is None else attr(element.find(W + child), name)


def chosen(alternate: ElementTree.Element) -> ElementTree.Element | None:
    """The one branch of an `mc:AlternateContent` to read: its first Choice, else its Fallback."""
    choice = alternate.find(MC + "Choice")
    return choice if choice is not None else alternate.find(MC + "Fallback")


def children(element: ElementTree.Element, tags: frozenset[str]) -> Iterator[ElementTree.Element]:
    """The element's children with one of `tags`, looking through wrappers and alternate content."""
    for child in element:
        if child.tag in tags:
            yield child
        elif child.tag in _WRAPPERS:
            yield from children(child, tags)
        elif child.tag == MC + "AlternateContent" and (branch := chosen(child)) is not None:
            yield from children(branch, tags)


@dataclass(frozen=True, slots=True)
class NoteRef:
    kind: str  # "footnote" or "endnote"
    id: str


@dataclass(slots=True)
class Runs:
    pieces: list[str | NoteRef] = field(default_factory=list)  # text, and note references in place
    boxes: list[ElementTree.Element] = field(default_factory=list)  # w:txbxContent, in order

    def text(self) -> str:
        return "".join(piece for piece in self.pieces if isinstance(piece, str))


def read_runs(element: ElementTree.Element, runs: Runs | None = None) -> Runs:
    """The text of a paragraph (or a note, or a cell) in reading order. Deleted text (`w:delText`)
    and field codes (`w:instrText`) are not text; a field's result is."""
    runs = Runs() if runs is None else runs
    for child in element:
        tag = child.tag
        if tag == W + "t":
            if child.text:
                runs.pieces.append(child.text)
        elif tag in _SPACES:
            runs.pieces.append(" ")
        elif tag == W + "noBreakHyphen":
            runs.pieces.append("-")
        elif tag in _NOTE_REFERENCES:
            runs.pieces.append(NoteRef(_NOTE_REFERENCES[tag], attr(child, "id") or ""))
        elif tag == W + "txbxContent":
            runs.boxes.append(child)
        elif tag == MC + "AlternateContent":
            branch = chosen(child)
            if branch is not None:
                read_runs(branch, runs)
        elif tag == W + "p":  # a paragraph inside a cell or a note: paragraphs are apart
            read_runs(child, runs)
            runs.pieces.append(" ")
        else:
            read_runs(child, runs)
    return runs
