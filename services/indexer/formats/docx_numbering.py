"""Word's automatic paragraph numbers (word/numbering.xml) rendered as text: "3.2", "b)", "iv.".

Word does not store the numbers it shows; it stores list definitions and counts the paragraphs
as it lays them out. A heading numbered "3.2" in Word is "Pumps" in the XML, so "Section 3.2"
could not be found. The numbers are counted here as Word counts them:

- a paragraph's `w:numPr` (its own, else its style's) names a list instance (`w:num`), which
  points at a definition (`w:abstractNum`, possibly through a numbering style's `w:numStyleLink`)
  with up to nine levels: `w:start`, `w:numFmt`, `w:lvlText` ("%1.%2"), `w:lvlRestart`,
  `w:isLgl`; a style-linked paragraph without `w:ilvl` is at the level whose `w:pStyle` is its
  style;
- instances of one definition share its counters (Word continues a list across them), except
  that an instance with a `w:startOverride` starts that level again at its first paragraph;
- using a level restarts every deeper level, unless that level's `w:lvlRestart` says otherwise.

Bullets are not rendered (their glyph is a private-use character in a symbol font).
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.etree import ElementTree

from services.indexer.formats.docx_styles import NumberingRef
from services.indexer.formats.docx_xml import W, attr, child_attr

_ROMAN = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))
_PLACEHOLDER_LEVELS = range(9)


def _roman(value: int) -> str:
    if value <= 0:
        return str(value)
    out = []
    for amount, letters in _ROMAN:
        count, value = divmod(value, amount)
        out.append(letters * count)
    return "".join(out)


def _letters(value: int) -> str:
    """Word's letters: a..z, then aa..zz, then aaa..."""
    if value <= 0:
        return str(value)
    return chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)


def format_number(value: int, fmt: str) -> str:
    """One level's number in its `w:numFmt`; formats without a Latin rendering fall back to digits."""
    if fmt in ("none", "bullet"):
        return ""
    if fmt == "lowerLetter":
        return _letters(value)
    if fmt == "upperLetter":
        return _letters(value).upper()
    if fmt == "lowerRoman":
        return _roman(value)
    if fmt == "upperRoman":
        return _roman(value).upper()
    if fmt == "decimalZero":
        return f"{value:02d}"
    return str(value)


@dataclass(frozen=True, slots=True)
class Level:
    start: int = 0  # ECMA-376's default when w:start is absent
    fmt: str = "decimal"
    text: str = ""
    restart: int | None = None  # w:lvlRestart: restart after levels 1..restart (0: never); None: any higher
    legal: bool = False  # w:isLgl: every level's number shown as decimal
    style: str | None = None


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _level(lvl: ElementTree.Element) -> Level:
    restart = child_attr(lvl, "lvlRestart")
    legal = lvl.find(W + "isLgl")
    return Level(
        start=_int(child_attr(lvl, "start"), 0),
        fmt=child_attr(lvl, "numFmt") or "decimal",
        text=child_attr(lvl, "lvlText") or "",
        restart=_int(restart, 0) if restart is not None else None,
        legal=legal is not None and attr(legal) not in ("0", "false", "off"),
        style=child_attr(lvl, "pStyle"),
    )


def _levels(element: ElementTree.Element) -> dict[int, Level]:
    return {_int(attr(lvl, "ilvl"), 0): _level(lvl) for lvl in element.findall(W + "lvl")}


class Numbering:
    """The list definitions of one document and the counters of one reading of it."""

    def __init__(self, root: ElementTree.Element | None) -> None:
        self._abstract_levels: dict[str, dict[int, Level]] = {}
        self._num_abstract: dict[str, str] = {}
        self._num_levels: dict[str, dict[int, Level]] = {}  # w:lvlOverride/w:lvl per instance
        self._num_starts: dict[str, dict[int, int]] = {}  # w:lvlOverride/w:startOverride per instance
        self._counters: dict[str, dict[int, int]] = {}
        self._started: set[tuple[str, int]] = set()
        if root is not None:
            self._read(root)

    def _read(self, root: ElementTree.Element) -> None:
        linked: dict[str, str] = {}  # numbering style id -> the definition that carries its levels
        links: dict[str, str] = {}  # definition -> the numbering style it defers to
        for abstract in root.findall(W + "abstractNum"):
            abstract_id = attr(abstract, "abstractNumId") or ""
            self._abstract_levels[abstract_id] = _levels(abstract)
            if style_link := child_attr(abstract, "styleLink"):
                linked[style_link] = abstract_id
            if num_style := child_attr(abstract, "numStyleLink"):
                links[abstract_id] = num_style
        direct: dict[str, str] = {}
        for num in root.findall(W + "num"):
            num_id = attr(num, "numId") or ""
            direct[num_id] = child_attr(num, "abstractNumId") or ""
            for override in num.findall(W + "lvlOverride"):
                level = _int(attr(override, "ilvl"), 0)
                start = child_attr(override, "startOverride")
                if start is not None:
                    self._num_starts.setdefault(num_id, {})[level] = _int(start, 1)
                lvl = override.find(W + "lvl")
                if lvl is not None:
                    self._num_levels.setdefault(num_id, {})[level] = _level(lvl)
        for num_id, abstract_id in direct.items():
            # A definition that defers to a numbering style counts with the one that defines it.
            style = links.get(abstract_id)
            self._num_abstract[num_id] = linked.get(style, abstract_id) if style else abstract_id

    def _levels_of(self, num_id: str) -> dict[int, Level]:
        levels = dict(self._abstract_levels.get(self._num_abstract.get(num_id, ""), {}))
        levels.update(self._num_levels.get(num_id, {}))
        return levels

    def label(self, ref: NumberingRef | None, style: str | None) -> str:
        """The number Word shows before this paragraph ("" for none), counting the paragraph."""
        if ref is None or not ref.num_id or ref.num_id == "0" or ref.num_id not in self._num_abstract:
            return ""
        levels = self._levels_of(ref.num_id)
        level = ref.level
        if level is None:
            level = next((k for k, lvl in levels.items() if style and lvl.style == style), 0)
        if level not in levels:
            return ""
        counters = self._counters.setdefault(self._num_abstract[ref.num_id], {})
        self._count(ref.num_id, level, levels, counters)
        shown = levels[level]
        if shown.fmt == "bullet":
            return ""
        text = shown.text
        for placeholder in _PLACEHOLDER_LEVELS:
            token = f"%{placeholder + 1}"
            if token in text:
                other = levels.get(placeholder, Level())
                value = counters.get(placeholder, other.start)
                text = text.replace(token, format_number(value, "decimal" if shown.legal else other.fmt))
        return text.strip()

    def _count(self, num_id: str, level: int, levels: dict[int, Level], counters: dict[int, int]) -> None:
        start = self._num_starts.get(num_id, {}).get(level)
        if start is not None and (num_id, level) not in self._started:
            self._started.add((num_id, level))
            counters[level] = start
        elif level in counters:
            counters[level] += 1
        else:
            counters[level] = levels[level].start
        for deeper in [k for k in counters if k > level]:
            restart = levels[deeper].restart if deeper in levels else None
            if level < (deeper if restart is None else restart):
                del counters[deeper]
