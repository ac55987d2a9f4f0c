"""Non-PDF documents (DOCX, HTML, Markdown, plain text) read into headings and paragraphs."""

from __future__ import annotations

from services.indexer.formats.blocks import Block, TextDocument
from services.indexer.formats.docx import read_docx
from services.indexer.formats.html import read_html
from services.indexer.formats.markdown import read_markdown, read_plain_text
from shared.model.formats import DocumentFormat

__all__ = ["Block", "TextDocument", "read_text_document"]

_READERS = {
    DocumentFormat.DOCX: read_docx,
    DocumentFormat.HTML: read_html,
    DocumentFormat.MARKDOWN: read_markdown,
    DocumentFormat.TEXT: read_plain_text,
}


def read_text_document(data: bytes, fmt: DocumentFormat) -> TextDocument:
    """Raises a services.indexer.errors.DocumentError subclass when the file cannot be read."""
    return _READERS[fmt](data)
