"""Page images and evidence boxes, from the stored PDF with pypdfium2.

Both are pure functions of the PDF bytes: the HTTP layer fetches the bytes and caches results.
pdfium is not thread-safe, so every call into it holds one process-wide lock.
"""

from __future__ import annotations

import io
import math
import re
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pydantic import BaseModel, Field

from services.gateway.web.boxes import one_per_line, page_box
from services.gateway.web.text_layer import layer_of
from shared.model.text_layer import Box, TextLayer

# A page image larger than this many pixels is rendered at the largest scale that fits, so one
# request cannot make the gateway allocate hundreds of megabytes (A4 at scale 4 is 8.9 Mpx).
MAX_PIXELS = 12_000_000
# The largest scale a page is rendered at (288 dpi), however wide it is asked for.
MAX_SCALE = 4.0
# Evidence shorter than this matches too many places on a page to highlight one of them.
MIN_EVIDENCE_CHARS = 3

_PDFIUM = threading.Lock()
_WORD = re.compile(r"\w+", re.UNICODE)
_ELLIPSIS = re.compile(r"…|\.\.\.")


class PageNotFound(LookupError):
    """The document has no page with that number."""


class UnreadablePdf(ValueError):
    """pdfium could not open the stored PDF."""


class EvidenceBoxes(BaseModel):
    page: int
    match: str = Field(description="exact: the text is on the page; closest: the best-matching passage; none.")
    matched_text: str = Field(default="", description="The page text the boxes cover.")
    boxes: list[Box] = Field(default_factory=list)


@dataclass(frozen=True)
class RenderedPage:
    png: bytes
    scale: float
    width: int
    height: int


def _open(data: bytes) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise UnreadablePdf(f"the stored PDF cannot be opened: {exc}") from exc


def _page(pdf: pdfium.PdfDocument, number: int) -> pdfium.PdfPage:
    if not 1 <= number <= len(pdf):
        raise PageNotFound(f"the document has {len(pdf)} pages; page {number} does not exist")
    return pdf[number - 1]


@contextmanager
def _opened_page(data: bytes, number: int) -> Iterator[pdfium.PdfPage]:
    """Page `number` (1-based) of the PDF, under pdfium's lock, the document closed after."""
    with _PDFIUM:
        pdf = _open(data)
        try:
            yield _page(pdf, number)
        finally:
            pdf.close()


def render_page(data: bytes, number: int, scale: float, width_px: int | None = None) -> RenderedPage:
    """PNG of page `number` (1-based) at `scale` (1 = 72 dpi), or `width_px` pixels wide when
    given (at most MAX_SCALE), scaled down to MAX_PIXELS."""
    with _opened_page(data, number) as page:
        width_pt, height_pt = page.get_size()
        if width_px is not None:
            # Floored to 4 decimals so that pdfium, rounding each side up, gives `width_px`.
            scale = min(math.floor(10_000 * width_px / max(width_pt, 1.0)) / 10_000, MAX_SCALE)
        # Rounded down: pdfium rounds each side up to whole pixels.
        limit = math.floor(1000 * (MAX_PIXELS / max(width_pt * height_pt, 1.0)) ** 0.5) / 1000
        used = min(scale, limit)
        image = page.render(scale=used, rotation=0).to_pil().copy()  # its own pixels, not pdfium's buffer
    # Encoded outside pdfium's lock: a page's text layer or boxes need not wait for the PNG.
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return RenderedPage(png=out.getvalue(), scale=round(used, 4), width=image.width, height=image.height)


def _normalised(text: str) -> tuple[str, list[int]]:
    """Lower-cased text with runs of whitespace as one space, and each kept char's original index."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace() or unicodedata.category(ch) == "Cc":
            if chars and chars[-1] != " ":
                chars.append(" ")
                origin.append(i)
            continue
        if ch in "\u00ad\ufffe":  # soft hyphens pdfium reports at line ends
            continue
        chars.append(ch.lower())
        origin.append(i)
    return "".join(chars), origin


def _exact_spans(page_text: str, evidence: str) -> list[tuple[int, int]]:
    """Text index spans where each piece of `evidence` (split at ellipses) occurs on the page."""
    haystack, origin = _normalised(page_text)
    spans: list[tuple[int, int]] = []
    for piece in _ELLIPSIS.split(evidence):
        needle, _ = _normalised(piece)
        needle = needle.strip()
        if len(needle) < MIN_EVIDENCE_CHARS:
            continue
        at = haystack.find(needle)
        if at >= 0:
            spans.append((origin[at], origin[at + len(needle) - 1] + 1))
    return spans


def _closest_span(page_text: str, evidence: str) -> tuple[int, int] | None:
    """The window of the page, as many words long as the evidence, sharing most of its words;
    None when it shares fewer than half (then nothing on the page says it)."""
    wanted = [w.lower() for w in _WORD.findall(evidence)]
    words = [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(page_text)]
    if not wanted or not words:
        return None
    vocabulary = set(wanted)
    size = min(len(wanted), len(words))
    hits = [1 if w in vocabulary else 0 for w, _, _ in words]
    current = sum(hits[:size])
    best, best_at = current, 0
    for start in range(1, len(words) - size + 1):
        current += hits[start + size - 1] - hits[start - 1]
        if current > best:
            best, best_at = current, start
    if best * 2 < len(vocabulary):
        return None
    window = [i for i in range(best_at, best_at + size) if hits[i]]
    return words[window[0]][1], words[window[-1]][2]


def _boxes(textpage: pdfium.PdfTextPage, start: int, end: int, width: float, height: float) -> list[Box]:
    first = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage.raw, start)
    last = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage.raw, end - 1)
    if first < 0 or last < first:
        return []
    rects = [textpage.get_rect(i) for i in range(textpage.count_rects(first, last - first + 1))]
    return one_per_line([page_box(left, bottom, right, top, width, height) for left, bottom, right, top in rects])


def evidence_boxes(data: bytes, number: int, evidence: str) -> EvidenceBoxes:
    """Where `evidence` is on page `number`: one box per line of the matched text."""
    with _opened_page(data, number) as page:
        width, height = page.get_size()
        textpage = page.get_textpage()
        text = textpage.get_text_range()
        spans = _exact_spans(text, evidence)
        match = "exact"
        if not spans:
            closest = _closest_span(text, evidence)
            spans, match = ([closest], "closest") if closest else ([], "none")
        boxes = [box for start, end in spans for box in _boxes(textpage, start, end, width, height)]
        matched = " … ".join(text[start:end] for start, end in spans)
        return EvidenceBoxes(page=number, match=match if boxes else "none", matched_text=matched, boxes=boxes)


def evidence_in_layer(layer: TextLayer, evidence: str) -> EvidenceBoxes:
    """Where `evidence` is among a text layer's words (a page recognised by OCR has no text in
    its PDF): matched as on a PDF's own text, one box per line around the words it covers."""
    pieces: list[str] = []  # the page's text: words joined by spaces, lines by line breaks
    placed: list[tuple[int, int, int, Box]] = []  # each word's start and end in it, its line and box
    at = 0
    for k, line in enumerate(layer.lines):
        for j, word in enumerate(line.words):
            placed.append((at, at + len(word.text), k, word.box))
            pieces.append(word.text + (" " if j < len(line.words) - 1 else "\n"))
            at += len(word.text) + 1
    text = "".join(pieces)
    spans = _exact_spans(text, evidence)
    match = "exact"
    if not spans:
        closest = _closest_span(text, evidence)
        spans, match = ([closest], "closest") if closest else ([], "none")
    boxes: list[Box] = []
    for start, end in spans:
        lines: dict[int, list[Box]] = {}
        for first, last, k, box in placed:
            if first < end and last > start:
                lines.setdefault(k, []).append(box)
        boxes.extend(Box.around(found) for _, found in sorted(lines.items()))
    matched = " … ".join(text[start:end] for start, end in spans)
    return EvidenceBoxes(page=layer.page, match=match if boxes else "none", matched_text=matched, boxes=boxes)


def text_layer(data: bytes, number: int) -> TextLayer:
    """The page's text as words and lines where they are printed (`text_layer.py`), so a viewer
    can lay it over the image for selection."""
    with _opened_page(data, number) as page:
        width, height = page.get_size()
        return layer_of(page.get_textpage(), number, width, height)
