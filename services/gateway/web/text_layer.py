"""A page's text as words and lines, from pdfium's character boxes, for the viewer to lay over
the page image so that it can be selected and copied as printed.

pdfium's rectangles are not words: on a kerned page they are single glyphs or glyph pairs, and
the text read back inside each one repeats its neighbours' characters. Characters are read one
by one instead, in content order, and grouped: a word ends at a space, at a gap wider than a
fraction of the text's height, or where the text leaves the line; a line ends where the text
moves to another baseline. Each word comes once, with the box that holds its characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from services.gateway.web.boxes import page_box
from shared.model.text_layer import Box, TextLayer, TextLine, TextWord

# A gap between two characters wider than this share of their height separates two words: a
# word space is a quarter to a third of the font size, the room between two letters much less.
WORD_GAP = 0.2
# A character whose vertical middle lies outside the previous one's extent by more than this
# share of its height is on another line (superscripts and mixed sizes stay on theirs).
LINE_SHIFT = 0.5
# pdfium reports a hyphen that breaks a word as \x02 or U+FFFE: printed at a line's end, where
# the word breaks; inside a line it is a soft hyphen the PDF does not show.
_BREAK_MARKS = ("\x02", "\ufffe")
BREAK = "\x02"
# A character drawn again over itself (fake bold) overlaps its first drawing this much.
REDRAWN_OVERLAP = 0.7


@dataclass(frozen=True, slots=True)
class Glyph:
    """One character with its box in page points (origin bottom-left); `space_before` when a
    space or a line break pdfium reports precedes it."""

    char: str
    left: float
    bottom: float
    right: float
    top: float
    space_before: bool

    @property
    def height(self) -> float:
        return self.top - self.bottom

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


def glyphs(textpage: pdfium.PdfTextPage) -> list[Glyph]:
    """The page's printed characters in content order (spaces only mark the next one); a
    hyphen that breaks a word is BREAK (`layer_of` decides whether it is printed)."""
    out: list[Glyph] = []
    gap = False
    for i in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage.raw, i)
        char = chr(code) if 0 < code < 0x110000 else ""
        if char in _BREAK_MARKS:
            char = BREAK
        if not char or char.isspace() or char in "\x00\u00ad" or pdfium_c.FPDFText_IsGenerated(textpage.raw, i) == 1:
            gap = True
            continue
        left, bottom, right, top = textpage.get_charbox(i, loose=True)
        glyph = Glyph(char, left, bottom, right, top, gap)
        gap = False
        if out and _redrawn(out[-1], glyph):
            continue
        out.append(glyph)
    return out


def _redrawn(previous: Glyph, glyph: Glyph) -> bool:
    if glyph.char != previous.char:
        return False
    overlap = min(previous.right, glyph.right) - max(previous.left, glyph.left)
    width = max(previous.right - previous.left, glyph.right - glyph.left, 1e-6)
    return overlap / width >= REDRAWN_OVERLAP and abs(glyph.middle - previous.middle) < 0.2 * max(glyph.height, 1e-6)


def _same_line(previous: Glyph, glyph: Glyph) -> bool:
    tall = max(previous.height, glyph.height, 1e-6)
    if glyph.middle < previous.bottom - LINE_SHIFT * tall or glyph.middle > previous.top + LINE_SHIFT * tall:
        return False
    return glyph.left >= previous.left - tall  # a step back to the left starts a new line


def group_lines(found: Sequence[Glyph]) -> list[list[list[Glyph]]]:
    """Glyphs grouped into lines of words."""
    lines: list[list[list[Glyph]]] = []
    for glyph in found:
        previous = lines[-1][-1][-1] if lines else None
        if previous is None or not _same_line(previous, glyph):
            lines.append([[glyph]])
            continue
        gap = glyph.left - previous.right
        if glyph.space_before or gap > WORD_GAP * max(previous.height, glyph.height):
            lines[-1].append([glyph])
        else:
            lines[-1][-1].append(glyph)
    return lines


def _union(glyphs_: Iterable[Glyph], width: float, height: float) -> Box:
    items = list(glyphs_)
    return page_box(min(g.left for g in items), min(g.bottom for g in items),
                    max(g.right for g in items), max(g.top for g in items), width, height)


def printed(line: list[list[Glyph]]) -> list[list[Glyph]]:
    """The line's words as printed: a break mark ending the line is its hyphen, one inside
    it is not shown (words left empty go)."""
    out: list[list[Glyph]] = []
    for k, word in enumerate(line):
        last = k == len(line) - 1
        kept = [g if g.char != BREAK else Glyph("-", g.left, g.bottom, g.right, g.top, g.space_before)
                for i, g in enumerate(word) if g.char != BREAK or (last and i == len(word) - 1)]
        if kept:
            out.append(kept)
    return out


def layer_of(textpage: pdfium.PdfTextPage, number: int, width: float, height: float) -> TextLayer:
    lines: list[TextLine] = []
    for found in group_lines(glyphs(textpage)):
        line = printed(found)
        if not line:
            continue
        lines.append(TextLine.of([TextWord(text="".join(g.char for g in word), box=_union(word, width, height))
                                  for word in line]))
    return TextLayer(page=number, aspect=round(height / max(width, 1.0), 6), lines=lines)
