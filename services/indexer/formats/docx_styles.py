"""DOCX paragraph styles (word/styles.xml): which make headings, which name the document, and
which number their paragraphs.

A style's heading level is its outline level (what Word's navigation pane shows), or N when it is
named "Heading N"; its numbering is its `w:numPr`. Both are inherited along `w:basedOn`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar
from xml.etree import ElementTree

from services.indexer.formats.docx_xml import W, attr, child_attr

_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.I)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class NumberingRef:
    num_id: str | None  # w:numId ("0" removes numbering); None: inherited
    level: int | None  # w:ilvl; None: the level that names the style (w:pStyle), else 0


@dataclass(slots=True)
class Styles:
    levels: dict[str, int] = field(default_factory=dict)  # heading level 1-9 (0: body) per style id
    titles: set[str] = field(default_factory=set)  # ids of title styles
    numbering: dict[str, NumberingRef] = field(default_factory=dict)


def outline_level(ppr: ElementTree.Element | None) -> int | None:
    """Word's outline level 0-8 as heading level 1-9; level 9 is body text."""
    value = child_attr(ppr, "outlineLvl")
    if value is None or not value.isdigit():
        return None
    level = int(value)
    return level + 1 if level < 9 else 0


def numbering_ref(ppr: ElementTree.Element | None) -> NumberingRef | None:
    numpr = None if ppr is None else ppr.find(W + "numPr")
    if numpr is None:
        return None
    level = child_attr(numpr, "ilvl")
    return NumberingRef(child_attr(numpr, "numId"), int(level) if level and level.isdigit() else None)


def _inherited(own: dict[str, T | None], based_on: dict[str, str], pick: Callable[[str], T | None]) -> dict[str, T]:
    """Each style's value, or the nearest ancestor's along basedOn that has one."""
    found: dict[str, T] = {}
    for style_id in own:
        seen: set[str] = set()
        current: str | None = style_id
        while current is not None and current not in seen:
            seen.add(current)
            value = pick(current)
            if value is not None:
                found[style_id] = value
                break
            current = based_on.get(current)
    return found


def read_styles(root: ElementTree.Element | None) -> Styles:
    styles = Styles()
    if root is None:
        return styles
    own_level: dict[str, int | None] = {}
    own_numbering: dict[str, NumberingRef | None] = {}
    based_on: dict[str, str] = {}
    for style in root.iter(W + "style"):
        if style.get(W + "type") != "paragraph":
            continue
        style_id = style.get(W + "styleId") or ""
        name = (child_attr(style, "name") or "").strip()
        ppr = style.find(W + "pPr")
        level = outline_level(ppr)
        named = _HEADING_NAME.match(name) or _HEADING_NAME.match(style_id)
        if level is None and named:
            level = int(named.group(1))
        if name.lower() == "title" or style_id.lower() == "title":
            styles.titles.add(style_id)
            level = 0
        own_level[style_id] = level
        own_numbering[style_id] = numbering_ref(ppr)
        parent = attr(style.find(W + "basedOn"))
        if parent:
            based_on[style_id] = parent
    styles.levels = _inherited(own_level, based_on, own_level.get)
    styles.numbering = _inherited(own_numbering, based_on, own_numbering.get)
    return styles
