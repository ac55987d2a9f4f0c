"""DOCX (Word 2007+) into headings and paragraphs, with the standard library's zip and XML readers.

A paragraph is a heading when it, or its style (following the style's `basedOn` chain), has an
outline level (what Word's navigation pane shows), or when its style is named "Heading N". Tables
become one line per row, cells separated by " | ".
"""

from __future__ import annotations

import re
import zipfile
from io import BytesIO
from xml.etree import ElementTree

from services.indexer.errors import (
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    UnsupportedFormatError,
)
from services.indexer.formats.blocks import Block, TextDocument, one_line
from shared.model.formats import OLE_MAGIC

KIND = "DOCX"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
_FIX = "open it in Word and save it again, or export it to PDF"
# Larger XML parts are refused before they are inflated (a zip bomb costs nothing to send).
_MAX_PART_BYTES = 256 * 1024 * 1024
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.I)
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")


def _part(archive: zipfile.ZipFile, name: str) -> ElementTree.Element | None:
    try:
        info = archive.getinfo(name)
    except KeyError:
        return None
    if info.file_size > _MAX_PART_BYTES:
        raise CorruptDocumentError(KIND, f"{name} inflates to {info.file_size} bytes", "split the document")
    try:
        return ElementTree.fromstring(archive.read(info))
    except ElementTree.ParseError as exc:
        raise CorruptDocumentError(KIND, f"{name} is not well-formed XML: {exc}", _FIX) from exc
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:  # zlib errors arrive as these
        raise CorruptDocumentError(KIND, f"{name} cannot be inflated: {exc}", _FIX) from exc


def _attr(element: ElementTree.Element | None, name: str = "val") -> str | None:
    return None if element is None else element.get(_W + name)


def _outline_level(ppr: ElementTree.Element | None) -> int | None:
    """Word's outline level 0-8 as heading level 1-9; level 9 is body text."""
    value = _attr(ppr.find(_W + "outlineLvl")) if ppr is not None else None
    if value is None or not value.isdigit():
        return None
    level = int(value)
    return level + 1 if level < 9 else 0


def _style_levels(styles: ElementTree.Element | None) -> tuple[dict[str, int], set[str]]:
    """Heading level of each paragraph style id, and the ids of title styles."""
    if styles is None:
        return {}, set()
    own: dict[str, int | None] = {}
    based_on: dict[str, str] = {}
    titles: set[str] = set()
    for style in styles.iter(_W + "style"):
        if style.get(_W + "type") != "paragraph":
            continue
        style_id = style.get(_W + "styleId") or ""
        name = (_attr(style.find(_W + "name")) or "").strip()
        level = _outline_level(style.find(_W + "pPr"))
        named = _HEADING_NAME.match(name) or _HEADING_NAME.match(style_id)
        if level is None and named:
            level = int(named.group(1))
        if name.lower() == "title" or style_id.lower() == "title":
            titles.add(style_id)
            level = 0
        own[style_id] = level
        parent = _attr(style.find(_W + "basedOn"))
        if parent:
            based_on[style_id] = parent
    levels: dict[str, int] = {}
    for style_id in own:
        seen: set[str] = set()
        current: str | None = style_id
        while current is not None and current not in seen:
            seen.add(current)
            if own.get(current) is not None:
                levels[style_id] = own[current] or 0
                break
            current = based_on.get(current)
    return levels, titles


def _text(element: ElementTree.Element) -> str:
    parts: list[str] = []
    for node in element.iter():
        tag = node.tag
        if tag == _W + "t" and node.text:
            parts.append(node.text)
        elif tag in (_W + "tab", _W + "br", _W + "cr"):
            parts.append(" ")
    return one_line("".join(parts))


def _body_blocks(body: ElementTree.Element, levels: dict[str, int], titles: set[str], document: TextDocument) -> None:
    for child in body:
        if child.tag == _W + "p":
            text = _text(child)
            if not text:
                continue
            ppr = child.find(_W + "pPr")
            style = _attr(ppr.find(_W + "pStyle")) if ppr is not None else None
            level = _outline_level(ppr)
            if level is None:
                level = levels.get(style or "", 0)
            if style in titles and not document.title:
                document.title = text
            document.blocks.append(Block(text=text, level=level))
        elif child.tag == _W + "tbl":
            for row in child.iter(_W + "tr"):
                cells = [_text(cell) for cell in row.iter(_W + "tc")]
                line = " | ".join(cell for cell in cells if cell)
                if line:
                    document.blocks.append(Block(text=line))
        elif child.tag == _W + "sdt":  # a content control: its paragraphs are in sdtContent
            content = child.find(_W + "sdtContent")
            if content is not None:
                _body_blocks(content, levels, titles, document)


def read_docx(data: bytes) -> TextDocument:
    if data.startswith(OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            raise EncryptedDocumentError(KIND)
        raise UnsupportedFormatError("a legacy Word .doc file; save it as DOCX or export it to PDF")
    if not data:
        raise EmptyDocumentError(KIND)
    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptDocumentError(KIND, "not a readable ZIP archive", _FIX) from exc
    with archive:
        root = _part(archive, "word/document.xml")
        if root is None:
            raise CorruptDocumentError(KIND, "no word/document.xml in the archive", _FIX)
        levels, titles = _style_levels(_part(archive, "word/styles.xml"))
        core = _part(archive, "docProps/core.xml")
    document = TextDocument()
    body = root.find(_W + "body")
    if body is not None:
        _body_blocks(body, levels, titles, document)
    if core is not None:
        meta_title = one_line(core.findtext(_DC_TITLE) or "")
        if meta_title:
            document.title = meta_title
    if not document.blocks:
        raise EmptyDocumentError(KIND)
    return document
