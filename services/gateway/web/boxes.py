"""Rectangles on a page as fractions of its size (origin top-left), so any scale can use them."""

from __future__ import annotations

from collections.abc import Sequence

from shared.model.text_layer import Box

# Two boxes whose vertical overlap is at least this share of the lower one's height lie on one line.
SAME_LINE_OVERLAP = 0.5


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def page_box(left: float, bottom: float, right: float, top: float, width: float, height: float) -> Box:
    """The box of a rectangle in page points (pdfium's origin bottom-left) on a page of that size."""
    return Box(left=_clamp(left / width), top=_clamp(1 - top / height),
               width=_clamp((right - left) / width), height=_clamp((top - bottom) / height))


def one_per_line(boxes: Sequence[Box]) -> list[Box]:
    """`boxes` merged into one box per line they lie on (glyph by glyph boxes of a kerned
    line become the line's one box), top to bottom."""
    merged: list[Box] = []
    for box in sorted(boxes, key=lambda b: (b.top, b.left)):
        last = merged[-1] if merged else None
        if last is not None:
            overlap = min(last.top + last.height, box.top + box.height) - max(last.top, box.top)
            if overlap >= SAME_LINE_OVERLAP * max(min(last.height, box.height), 1e-9):
                left, top = min(last.left, box.left), min(last.top, box.top)
                right = max(last.left + last.width, box.left + box.width)
                bottom = max(last.top + last.height, box.top + box.height)
                merged[-1] = Box(left=left, top=top, width=_clamp(right - left), height=_clamp(bottom - top))
                continue
        merged.append(box)
    return merged
