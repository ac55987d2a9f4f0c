"""Markdown and plain text into headings and paragraphs, line by line.

Markdown headings are ATX (`## Title`) and setext (a line underlined with `===` or `---`);
fenced code blocks and YAML front matter are never headings (a front matter `title:` names the
document). Plain text has the same setext underlines and, in addition, numbered lines standing
alone between blank lines (`3 Results`, `4.2 Method`, `Chapter 5 ...`), whose level is their
numbering depth. Consecutive lines form one paragraph; a blank line ends it.
"""

from __future__ import annotations

import re

from services.indexer.errors import EmptyDocumentError
from services.indexer.formats.blocks import Block, TextDocument, decode_text, one_line

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_TITLE = re.compile(r"^title:\s*[\"']?(.*?)[\"']?\s*$", re.I)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")
_NUMBERED = re.compile(
    r"^(?:(?:chapter|section|part|appendix)\s+\w+|(\d+(?:\.\d+)*)\.?|[IVXLC]+\.)\s+\S.{0,100}$", re.I
)
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")


def _inline(text: str) -> str:
    """Markdown inline markup removed: link texts without targets, no emphasis marks."""
    text = _LINK.sub(r"\1", text)
    for _ in range(2):  # nested emphasis (`**_x_**`)
        text = _EMPHASIS.sub(r"\2", text)
    return one_line(text)


class _Lines:
    """Paragraph lines gathered until a blank line or a heading ends them."""

    def __init__(self, markdown: bool) -> None:
        self.markdown = markdown
        self.document = TextDocument()
        self.paragraph: list[str] = []

    def flush(self) -> None:
        if self.paragraph:
            text = " ".join(self.paragraph)
            text = _inline(text) if self.markdown else one_line(text)
            if text:
                self.document.blocks.append(Block(text=text))
        self.paragraph = []

    def heading(self, text: str, level: int) -> None:
        self.flush()
        text = _inline(text) if self.markdown else one_line(text)
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


def _read(text: str, markdown: bool) -> TextDocument:
    lines = text.splitlines()
    reader = _Lines(markdown)
    start = _front_matter(lines, reader.document) if markdown else 0
    fence: str | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        if markdown and (found := _FENCE.match(line)):
            marker = found.group(1)
            if fence is None:
                reader.flush()
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
                reader.flush()
            continue
        if fence is not None:
            # Code keeps its lines: each is a paragraph of its own.
            if line.strip():
                reader.document.blocks.append(Block(text=line.rstrip()))
            continue
        if not line.strip():
            reader.flush()
            continue
        if markdown and (atx := _ATX.match(line)):
            reader.heading(atx.group(2) or "", len(atx.group(1)))
            continue
        setext = _SETEXT.match(line)
        if setext and len(reader.paragraph) == 1:
            heading = reader.paragraph.pop()
            reader.heading(heading, 1 if setext.group(1)[0] == "=" else 2)
            continue
        if not markdown and not reader.paragraph and (level := _numbered_level(line)):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not following.strip():
                reader.heading(line, level)
                continue
        reader.paragraph.append(line.strip())
    reader.flush()
    return reader.document


def read_markdown(data: bytes) -> TextDocument:
    document = _read(decode_text(data, "Markdown"), markdown=True)
    if not document.blocks:
        raise EmptyDocumentError("Markdown")
    return document


def read_plain_text(data: bytes) -> TextDocument:
    document = _read(decode_text(data, "text"), markdown=False)
    if not document.blocks:
        raise EmptyDocumentError("text")
    return document
