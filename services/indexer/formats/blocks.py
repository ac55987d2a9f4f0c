"""What every non-PDF reader produces: the document as headings and paragraphs, in order."""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

from services.indexer.errors import CorruptDocumentError


@dataclass(frozen=True, slots=True)
class Block:
    text: str  # one line: a heading or a whole paragraph
    level: int = 0  # heading level 1-6; 0 for body text
    # Notes the text cites, each one line starting with its mark ("[1] ..."), as the mark is in
    # the text: they go on the page that holds the mark, as a printed footnote does.
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class TextDocument:
    blocks: list[Block] = field(default_factory=list)
    title: str = ""  # the document's own title (metadata, <title>, front matter), "" when none


def one_line(text: str) -> str:
    return " ".join(text.split())


_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_text(data: bytes, kind: str, declared: str | None = None) -> str:
    """Bytes of a text format as str: a byte-order mark, else UTF-8, else the declared charset,
    else Windows-1252 (the usual legacy encoding, which decodes any byte). Binary data is refused."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise CorruptDocumentError(kind, f"invalid {encoding} at byte {exc.start}",
                                           "save it again as UTF-8") from exc
    if b"\x00" in data[:8192]:
        raise CorruptDocumentError(kind, "binary data, not text", f"pass the {kind} file itself")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if declared:
        try:
            return data.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    return data.decode("cp1252", errors="replace")
