"""Which kind of document a file is: one rule for `treerag index`, the gateway and the indexer.

The file name's extension decides when it names a known format (a `.pdf` that is not a PDF is
then reported as a bad PDF, not guessed into text); otherwise the bytes do, and the upload's
content type is a last hint.
"""

from __future__ import annotations

import zipfile
from enum import StrEnum
from io import BytesIO
from pathlib import PurePath


class DocumentFormat(StrEnum):
    PDF = "pdf"
    DOCX = "docx"
    HTML = "html"
    MARKDOWN = "markdown"
    TEXT = "text"


# The name each format has in messages to users.
FORMAT_NAMES = {
    DocumentFormat.PDF: "PDF",
    DocumentFormat.DOCX: "DOCX",
    DocumentFormat.HTML: "HTML",
    DocumentFormat.MARKDOWN: "Markdown",
    DocumentFormat.TEXT: "text",
}

MEDIA_TYPES = {
    DocumentFormat.PDF: "application/pdf",
    DocumentFormat.DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    DocumentFormat.HTML: "text/html",
    DocumentFormat.MARKDOWN: "text/markdown",
    DocumentFormat.TEXT: "text/plain",
}

# The extension a file of each format gets when the upload names none.
FILE_EXTENSIONS = {
    DocumentFormat.PDF: ".pdf",
    DocumentFormat.DOCX: ".docx",
    DocumentFormat.HTML: ".html",
    DocumentFormat.MARKDOWN: ".md",
    DocumentFormat.TEXT: ".txt",
}

EXTENSIONS = {
    ".pdf": DocumentFormat.PDF,
    ".docx": DocumentFormat.DOCX,
    ".html": DocumentFormat.HTML,
    ".htm": DocumentFormat.HTML,
    ".xhtml": DocumentFormat.HTML,
    ".md": DocumentFormat.MARKDOWN,
    ".markdown": DocumentFormat.MARKDOWN,
    ".txt": DocumentFormat.TEXT,
    ".text": DocumentFormat.TEXT,
}

_CONTENT_TYPES = {
    "application/pdf": DocumentFormat.PDF,
    "application/x-pdf": DocumentFormat.PDF,
    MEDIA_TYPES[DocumentFormat.DOCX]: DocumentFormat.DOCX,
    "text/html": DocumentFormat.HTML,
    "application/xhtml+xml": DocumentFormat.HTML,
    "text/markdown": DocumentFormat.MARKDOWN,
    "text/x-markdown": DocumentFormat.MARKDOWN,
    "text/plain": DocumentFormat.TEXT,
}

PDF_MAGIC = b"%PDF-"
_ZIP_MAGIC = b"PK\x03\x04"
# Word's encrypted and legacy (.doc) files are OLE compound files.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")


def format_of_name(file_name: str) -> DocumentFormat | None:
    return EXTENSIONS.get(PurePath(file_name).suffix.lower())


def format_of_content_type(content_type: str | None) -> DocumentFormat | None:
    return _CONTENT_TYPES.get((content_type or "").split(";")[0].strip().lower())


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    try:
        head.decode("utf-8")
        return True
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the sample is still text.
        return exc.start >= len(head) - 3


def sniff_format(data: bytes, file_name: str = "", content_type: str | None = None) -> DocumentFormat | None:
    """The format to read `data` as; None when it is none that can be indexed."""
    named = format_of_name(file_name)
    if named is not None:
        return named
    head = data[:1024]
    if PDF_MAGIC in head:
        return DocumentFormat.PDF
    if data.startswith(_ZIP_MAGIC):
        return DocumentFormat.DOCX if _is_docx(data) else None
    hinted = format_of_content_type(content_type)
    if hinted in (DocumentFormat.PDF, DocumentFormat.DOCX):
        return hinted  # declared so and not so: reported as a bad file of that kind
    if not _looks_like_text(head):
        return None
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if stripped.startswith(_HTML_STARTS) and b"<html" in data[:4096].lower():
        return DocumentFormat.HTML
    if hinted in (DocumentFormat.HTML, DocumentFormat.MARKDOWN):
        return hinted
    return DocumentFormat.TEXT
