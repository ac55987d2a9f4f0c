"""HTML into headings (h1-h6) and paragraphs, with the standard library's tolerant parser.

Only the document's own text is body text. Scripts, styles, templates, `noscript` and inline
SVG carry none. The page's chrome is left out too: `nav` and `aside`, anything with the ARIA role
banner, contentinfo, navigation or complementary, and `header` and `footer` where they are the
page's banner and footer, that is outside `article`, `aside`, `main`, `nav` and `section` (there
they are the header of that section, often holding its heading, and stay, as HTML-AAM maps them).
The title is the first `<title>` outside SVG (an SVG `<title>` names its picture), else the first
`h1` of the body. Every block element ends a paragraph.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from services.indexer.errors import EmptyDocumentError
from services.indexer.formats.blocks import Block, TextDocument, decode_text, one_line

KIND = "HTML"
_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "nav", "aside"})
_CHROME_ROLES = frozenset({"banner", "contentinfo", "navigation", "complementary"})
# A header or footer inside one of these belongs to it, not to the page.
_SECTIONING = frozenset({"article", "aside", "main", "nav", "section"})
_PAGE_CHROME = frozenset({"header", "footer"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({
    "p", "div", "section", "article", "main", "header", "footer", "blockquote", "pre",
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
        self._skip_stack: list[str] = []
        self._parts: list[str] = []
        self._level = 0
        self._in_title = False
        self._title_done = False  # a <title> with text was read: later ones are not the title
        self._title: list[str] = []
        self._first_h1 = ""
        self._sections: list[str] = []  # open sectioning elements (article, main, section, ...)

    def _flush(self) -> None:
        text = one_line("".join(self._parts))
        self._parts = []
        if text:
            self.document.blocks.append(Block(text=text, level=self._level))
            if self._level == 1 and not self._first_h1:
                self._first_h1 = text
        self._level = 0

    def _skips(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if tag in _VOID:
            return False
        if tag in _SKIPPED or (tag in _PAGE_CHROME and not self._sections):
            return True
        roles = next((value for name, value in attrs if name == "role"), None) or ""
        return not _CHROME_ROLES.isdisjoint(roles.lower().split())

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_stack or self._skips(tag, attrs):
            if tag not in _VOID:
                self._skip_stack.append(tag)
            return
        if tag == "title":
            self._in_title = not self._title_done
            return
        if tag in _SECTIONING:
            self._sections.append(tag)
        if tag in _HEADINGS:
            self._flush()
            self._level = _HEADINGS[tag]
        elif tag in _BLOCKS:
            self._flush()
        elif tag in _CELLS and self._parts:
            self._parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if self._skip_stack:
            if tag in self._skip_stack:
                # Unclosed children of the skipped element end with it.
                while self._skip_stack and self._skip_stack.pop() != tag:
                    pass
            return
        if tag == "title":
            self._title_done = self._title_done or bool(one_line("".join(self._title)))
            self._in_title = False
            return
        if tag in self._sections:
            # Unclosed sectioning children end with it too.
            while self._sections and self._sections.pop() != tag:
                pass
        if tag in _HEADINGS or tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._skip_stack:
            return
        if self._in_title:
            self._title.append(data)
        else:
            self._parts.append(data)

    def close(self) -> None:
        super().close()
        self._flush()
        self.document.title = one_line("".join(self._title)) or self._first_h1


def read_html(data: bytes) -> TextDocument:
    declared = _CHARSET.search(data[:4096])
    text = decode_text(data, KIND, declared.group(1).decode("ascii") if declared else None)
    reader = _Reader()
    reader.feed(text)
    reader.close()
    if not reader.document.blocks:
        raise EmptyDocumentError(KIND)
    return reader.document
