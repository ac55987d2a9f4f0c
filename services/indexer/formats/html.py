"""HTML into headings (h1-h6) and paragraphs, with the standard library's tolerant parser.

Scripts, styles, templates, inline SVG and navigation bars carry no document text and are
skipped; every block element ends a paragraph.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from services.indexer.errors import EmptyDocumentError
from services.indexer.formats.blocks import Block, TextDocument, decode_text, one_line

KIND = "HTML"
_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "nav"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({
    "p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "pre",
    "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "caption",
    "figure", "figcaption", "form", "fieldset", "address", "details", "summary", "hr", "br", "body",
})
_CELLS = frozenset({"td", "th"})
# Elements that never have an end tag: they must not open a skipped region.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w-]+)""", re.I)


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.document = TextDocument()
        self._skip_depth = 0
        self._skip_stack: list[str] = []
        self._parts: list[str] = []
        self._level = 0
        self._in_title = False
        self._title: list[str] = []

    def _flush(self) -> None:
        text = one_line("".join(self._parts))
        self._parts = []
        if text:
            self.document.blocks.append(Block(text=text, level=self._level))
        self._level = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if self._skip_stack or (tag in _SKIPPED and tag not in _VOID):
            if tag not in _VOID:
                self._skip_stack.append(tag)
            return
        if tag in _HEADINGS:
            self._flush()
            self._level = _HEADINGS[tag]
        elif tag in _BLOCKS:
            self._flush()
        elif tag in _CELLS and self._parts:
            self._parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if self._skip_stack:
            if tag in self._skip_stack:
                # Unclosed children of the skipped element end with it.
                while self._skip_stack and self._skip_stack.pop() != tag:
                    pass
            return
        if tag in _HEADINGS or tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)
        elif not self._skip_stack:
            self._parts.append(data)

    def close(self) -> None:
        super().close()
        self._flush()
        self.document.title = one_line("".join(self._title))


def read_html(data: bytes) -> TextDocument:
    declared = _CHARSET.search(data[:4096])
    text = decode_text(data, KIND, declared.group(1).decode("ascii") if declared else None)
    reader = _Reader()
    reader.feed(text)
    reader.close()
    if not reader.document.blocks:
        raise EmptyDocumentError(KIND)
    return reader.document
