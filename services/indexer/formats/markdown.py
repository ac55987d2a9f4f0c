"""Markdown and plain text into headings and paragraphs.

Markdown is read as CommonMark (with tables) through markdown-it-py's token stream, so what
the text says stays as written: identifiers and code spans keep their underscores and stars
(`a_b_c` is not emphasis), code blocks keep their lines, reference links become their text,
setext headings may span lines, headings inside block quotes and list items are headings,
thematic breaks (`---`) are no text, and a `#` inside an HTML block is not a heading. YAML front
matter is never text (its `title:` names the document).

Plain text has setext underlines (`===`, `---`) and numbered lines standing alone between blank
lines (`3 Results`, `4.2 Method`, `Chapter 5 ...`), whose level is their numbering depth.
Consecutive lines form one paragraph; a blank line ends it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

from services.indexer.errors import EmptyDocumentError
from services.indexer.formats.blocks import Block, TextDocument, decode_text, one_line

_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FRONT_TITLE = re.compile(r"^title:\s*[\"']?(.*?)[\"']?\s*$", re.I)
_TAG = re.compile(r"<[^>]*>")
_NUMBERED = re.compile(
    r"^(?:(?:chapter|section|part|appendix)\s+\w+|(\d+(?:\.\d+)*)\.?|[IVXLC]+\.)\s+\S.{0,100}$", re.I
)
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")


class _Lines:
    """Plain-text paragraph lines gathered until a blank line or a heading ends them."""

    def __init__(self) -> None:
        self.document = TextDocument()
        self.paragraph: list[str] = []

    def flush(self) -> None:
        if self.paragraph:
            text = one_line(" ".join(self.paragraph))
            if text:
                self.document.blocks.append(Block(text=text))
        self.paragraph = []

    def heading(self, text: str, level: int) -> None:
        self.flush()
        text = one_line(text)
        if text:
            self.document.blocks.append(Block(text=text, level=level))


def _front_matter(lines: list[str], document: TextDocument) -> int:
    """Lines taken by YAML front matter (0 when there is none); its title names the document."""
    if not lines or lines[0].strip() != "---":
        return 0
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() in ("---", "..."):
            for line in lines[1:end]:
                found = _FRONT_TITLE.match(line.strip())
                if found and found.group(1):
                    document.title = one_line(found.group(1))
            return end + 1
    return 0


def _numbered_level(line: str) -> int:
    """Heading level of a plain-text numbered line (0: not a heading)."""
    stripped = line.strip()
    match = _NUMBERED.match(stripped)
    if not match or stripped.endswith((".", ",", ";", ":")) or _LIST_OR_QUOTE.match(line) and not match.group(1):
        return 0
    if sum(ch.isalpha() for ch in stripped) < 3:
        return 0
    return match.group(1).count(".") + 1 if match.group(1) else 1


def _read_plain(text: str) -> TextDocument:
    lines = text.splitlines()
    reader = _Lines()
    for index, line in enumerate(lines):
        if not line.strip():
            reader.flush()
            continue
        setext = _SETEXT.match(line)
        if setext and len(reader.paragraph) == 1:
            heading = reader.paragraph.pop()
            reader.heading(heading, 1 if setext.group(1)[0] == "=" else 2)
            continue
        if not reader.paragraph and (level := _numbered_level(line)):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not following.strip():
                reader.heading(line, level)
                continue
        reader.paragraph.append(line.strip())
    reader.flush()
    return reader.document


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def inline_text(children: Sequence[Token]) -> str:
    """The words of an inline token's children as a reader sees them: text and code spans as
    written, link texts without their targets, image descriptions, no markup or inline HTML."""
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(inline_text(child.children or []))
    return one_line("".join(parts))


def _read_markdown(text: str) -> TextDocument:
    lines = text.splitlines()
    document = TextDocument()
    body = "\n".join(lines[_front_matter(lines, document):])
    tokens = _parser().parse(body)
    row: list[str] | None = None  # the cells of the table row being read
    for k, token in enumerate(tokens):
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            if any(row):
                document.blocks.append(Block(text=" | ".join(row)))
            row = None
        elif token.type == "inline":
            words = inline_text(token.children or [])
            opener = tokens[k - 1].type if k else ""
            if row is not None:
                row.append(words)
            elif opener == "heading_open" and words:
                document.blocks.append(Block(text=words, level=int(tokens[k - 1].tag[1:])))
            elif words:
                document.blocks.append(Block(text=words))
        elif token.type in ("fence", "code_block"):
            # Code keeps its lines: each is a paragraph of its own.
            document.blocks.extend(Block(text=line.rstrip()) for line in token.content.splitlines() if line.strip())
        elif token.type == "html_block":
            words = one_line(_TAG.sub(" ", token.content))
            if words:
                document.blocks.append(Block(text=words))
    return document


def read_markdown(data: bytes) -> TextDocument:
    document = _read_markdown(decode_text(data, "Markdown"))
    if not document.blocks:
        raise EmptyDocumentError("Markdown")
    return document


def read_plain_text(data: bytes) -> TextDocument:
    document = _read_plain(decode_text(data, "text"))
    if not document.blocks:
        raise EmptyDocumentError("text")
    return document
