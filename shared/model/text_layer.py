"""A page's printed words with their boxes, as a viewer lays them over the page's image for
selection and as highlights are placed: from pdfium's characters for a PDF's own text (the
gateway), from Tesseract's word boxes for a page recognised by OCR (the indexer stores them)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field


class Box(BaseModel):
    """A rectangle as fractions of the page (origin top-left), so any scale can use it."""

    left: float = Field(ge=0, le=1)
    top: float = Field(ge=0, le=1)
    width: float = Field(ge=0, le=1)
    height: float = Field(ge=0, le=1)

    @classmethod
    def around(cls, boxes: Sequence[Box]) -> Box:
        """The smallest box holding `boxes` (at least one)."""
        left, top = min(b.left for b in boxes), min(b.top for b in boxes)
        right, bottom = max(b.left + b.width for b in boxes), max(b.top + b.height for b in boxes)
        return cls(left=left, top=top, width=min(right - left, 1.0), height=min(bottom - top, 1.0))


class TextWord(BaseModel):
    """One word as printed, and the box that holds it."""

    text: str
    box: Box


class TextLine(BaseModel):
    """One printed line: its words in reading order, their text joined by single spaces."""

    text: str
    box: Box
    words: list[TextWord]

    @classmethod
    def of(cls, words: Sequence[TextWord]) -> TextLine:
        """The line of `words` (at least one), in the order given."""
        return cls(text=" ".join(w.text for w in words), box=Box.around([w.box for w in words]), words=list(words))


class TextLayer(BaseModel):
    page: int = Field(description="1-based physical page.")
    aspect: float = Field(description="Page height / width: font sizes follow the page's width.")
    lines: list[TextLine]
