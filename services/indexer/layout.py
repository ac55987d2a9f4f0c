"""Tree from page layout when a PDF has no outline: headings found by style and numbering.

Evidence used, all measured against the document's own body text: font size, boldness,
numbering patterns ("1.2", "Chapter 3", "Item 7A.", "Article 5", "Appendix B", "제3조", "第2章"),
and whether the line opens its page. Running headers/footers, table-of-contents entries,
and labels repeated all over the document (e.g. "Arguments" in every reference entry) are
not section headings.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from services.indexer.extract import Line, PageLayout
from services.indexer.furniture import EDGE_LINES as _EDGE_LINES
from services.indexer.furniture import is_furniture
from services.indexer.nesting import Heading, nest
from shared.model.tree import TreeNode
from shared.text.normalize import normalize

_BIGGER = 1.15  # a heading's size relative to body text
_MAX_TITLE_CHARS = 120
_MAX_TITLE_WORDS = 16
_MAX_LEVELS = 4
# The pages a cover or title page can take, and the share of the document a section opening
# there may not hold: more, and it is the document's title, not one of its sections.
_COVER_PAGES = 2
_TITLE_SHARE = 0.5
# Unnumbered headings per numbered one, in one style, from which the numbered ones are parts
# holding the unnumbered ones; fewer, and they are siblings ("References" after "6 Conclusion").
_SECTIONS_PER_PART = 3
# A body-sized bold style on more than this share of all lines is emphasis, not headings.
_MAX_EMPHASIS_SHARE = 0.08
_TOC_ENTRY = re.compile(r"(\.\s?){4,}\s*\S*\d+\s*$|\.{3,}|…{2,}")
_TRAILING_PAGE_NUMBER = re.compile(r"\s\d{1,4}$")
_LETTER = re.compile(r"[^\W\d_]")
_CAPTION = re.compile(r"^(figure|fig\.|table|tab\.|algorithm|listing|chart|exhibit \d+[a-z]?:|source:|note:)\s*\S*\d", re.I)
_SENTENCE_TAIL = re.compile(r"[,;]$|^(\S+\s+){7,}.*\.$")

_NUMBERED: list[tuple[re.Pattern[str], object]] = [
    # 1 / 1. / 1.2 / 1.2.3 followed by a title word
    (re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+[^\W\d_(]"), "dotted"),
    (re.compile(r"^(?:part|book)\s+([0-9ivxlc]+|[a-z])\b", re.I), 1),
    (re.compile(r"^(?:chapter|appendix|annex|schedule|exhibit)\s+([0-9ivxlc]+|[a-z])\b", re.I), 1),
    (re.compile(r"^(?:item)\s+\d+[a-z]?\.?(?:\s|$)", re.I), 2),
    (re.compile(r"^(?:section|article|§)\s*\d+(?:\.\d+)*\b", re.I), 2),
    (re.compile(r"^제\s*\d+\s*[편장]"), 1),
    (re.compile(r"^제\s*\d+\s*[절관]"), 2),
    (re.compile(r"^제\s*\d+\s*조"), 3),
    (re.compile(r"^第\s*[\d一二三四五六七八九十百]+\s*[部編章]"), 1),
    (re.compile(r"^第\s*[\d一二三四五六七八九十百]+\s*[節节]"), 2),
    (re.compile(r"^第\s*[\d一二三四五六七八九十百]+\s*[条條款]"), 3),
    (re.compile(r"^[A-Z]\.\d{1,2}(?:\.\d{1,2})*\s+[^\W\d_]"), "appendix"),
    (re.compile(r"^[IVX]{1,5}\.\s+[^\W\d_]"), 1),
]


def numbering_depth(text: str) -> int:
    """Depth implied by a heading's numbering (1 = chapter-like), 0 when unnumbered."""
    for pattern, depth in _NUMBERED:
        match = pattern.match(text)
        if not match:
            continue
        if depth == "dotted":
            return match.group(1).count(".") + 1
        if depth == "appendix":
            return match.group(0).split()[0].count(".") + 1
        return int(depth)  # type: ignore[call-overload]
    return 0


@dataclass(slots=True)
class _Candidate:
    page: int
    line: int  # index among the page's content lines
    text: str
    size: float
    bold: bool
    top: float
    depth: int

    @property
    def style(self) -> tuple[float, bool]:
        return (self.size, self.bold)


def _body_size(layouts: list[PageLayout]) -> float:
    weights: Counter[float] = Counter()
    for layout in layouts:
        for line in layout.lines:
            weights[line.size] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def _is_toc_page(lines: list[Line]) -> bool:
    entries = sum(1 for ln in lines if _TOC_ENTRY.search(ln.text))
    return entries >= 5 and entries >= 0.3 * len(lines)


def _looks_like_title(text: str) -> bool:
    if not (2 <= len(text) <= _MAX_TITLE_CHARS) or len(text.split()) > _MAX_TITLE_WORDS:
        return False
    if len(_LETTER.findall(text)) < 3 or _CAPTION.match(text):
        return False
    if text[0].islower() and text.endswith("."):  # the tail of a wrapped bold sentence
        return False
    return not _SENTENCE_TAIL.search(text)


_DANGLING_WORD = re.compile(r"\b(the|a|an|and|or|of|to|in|for|with|by|on|at|from|as|is|are)$", re.I)


def _plausible_numbered_title(text: str) -> bool:
    """Without usable font styles, a numbered line is a heading only if it reads like one:
    capitalised after its number, not ending like a sentence or mid-phrase."""
    rest = re.sub(r"^\S+\s+", "", text, count=1)
    return bool(rest[:1].isupper()) and not text.endswith(".") and not _DANGLING_WORD.search(text)


def _content(lines: list[Line], furniture: frozenset[str]) -> list[Line]:
    """The lines without running headers/footers; only edge lines can be those, so only
    they are checked (normalising every line of a long PDF would cost more than reading it)."""
    edge = _EDGE_LINES
    if len(lines) <= 2 * edge:
        return [ln for ln in lines if not is_furniture(ln.text, furniture)]
    head = [ln for ln in lines[:edge] if not is_furniture(ln.text, furniture)]
    tail = [ln for ln in lines[-edge:] if not is_furniture(ln.text, furniture)]
    return head + lines[edge:-edge] + tail


def _candidates(
    layouts: list[PageLayout], furniture: frozenset[str], body: float, styles_reliable: bool
) -> list[_Candidate]:
    found: list[_Candidate] = []
    bigger_than = body * _BIGGER
    emphasis_floor = body * 0.95
    for page_index, layout in enumerate(layouts):
        toc_page = _is_toc_page(layout.lines)
        for position, line in enumerate(_content(layout.lines, furniture)):
            # Cheap style test first: most lines are body text.
            if styles_reliable and not (
                (body > 0 and line.size >= bigger_than) or (line.bold and line.size >= emphasis_floor)
            ):
                continue
            text = line.text
            if not _looks_like_title(text) or _TOC_ENTRY.search(text):
                continue
            if toc_page and _TRAILING_PAGE_NUMBER.search(text):
                continue
            depth = numbering_depth(text)
            if not styles_reliable and (depth == 0 or len(text) > 70 or not _plausible_numbered_title(text)):
                continue
            found.append(
                _Candidate(page_index + 1, position, text, line.size, line.bold, line.top, depth)
            )
    return found


def _merge_wrapped(candidates: list[_Candidate]) -> list[_Candidate]:
    """Join a heading that wraps onto a second line of the same style."""
    merged: list[_Candidate] = []
    for cand in candidates:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and prev.page == cand.page
            and prev.line + 1 == cand.line
            and prev.bold == cand.bold
            and abs(prev.size - cand.size) <= 0.1 * prev.size
            and cand.depth == 0
            and 0 <= cand.top - prev.top <= 2.2 * max(cand.size, 1.0)
            and len(prev.text) + len(cand.text) <= _MAX_TITLE_CHARS
            and prev.text.isupper() == cand.text.isupper()  # "RESULTS" then "Star India": two
        ):
            if prev.text.endswith("-") and cand.text[:1].islower():
                prev.text = prev.text[:-1] + cand.text
            else:
                prev.text = f"{prev.text} {cand.text}"
            prev.line = cand.line
            continue
        merged.append(cand)
    return merged


def _drop_repeated_labels(candidates: list[_Candidate], page_count: int) -> list[_Candidate]:
    """Labels like "Examples" heading every entry of a reference manual, or repeated twice on
    one page (figure and table labels), are not sections."""
    keys = [normalize(c.text) for c in candidates]
    counts = Counter(keys)
    per_page = Counter(zip(keys, (c.page for c in candidates), strict=True))
    limit = max(4, page_count // 50)
    return [
        c for c, key in zip(candidates, keys, strict=True)
        if counts[key] <= limit and per_page[(key, c.page)] == 1
    ]


def _drop_front_page_styles(candidates: list[_Candidate], page_count: int) -> list[_Candidate]:
    """Styles seen only on the first page (authors, affiliations, dates), except the largest
    (the document's title) and numbered ones, are front matter, not sections."""
    if page_count < 4 or not candidates:
        return candidates
    pages_per_style: dict[tuple[float, bool], set[int]] = defaultdict(set)
    for c in candidates:
        pages_per_style[c.style].add(c.page)
    largest = max(pages_per_style, key=lambda s: (s[0], s[1]))
    front_only = {s for s, pages in pages_per_style.items() if pages == {1} and s != largest}
    return [c for c in candidates if c.style not in front_only or c.depth]


def _heading_styles(candidates: list[_Candidate], body: float, total_lines: int) -> set[tuple[float, bool]]:
    """Styles used sparingly enough to mark headings (bold body text in tables is not)."""
    per_style: dict[tuple[float, bool], list[_Candidate]] = defaultdict(list)
    for cand in candidates:
        per_style[cand.style].append(cand)
    kept = set()
    for style, members in per_style.items():
        size, _bold = style
        share = len(members) / max(total_lines, 1)
        numbered = sum(1 for m in members if m.depth) / len(members)
        if size >= body * _BIGGER or share <= _MAX_EMPHASIS_SHARE or numbered >= 0.5:
            kept.add(style)
    return kept


def _levels(candidates: list[_Candidate], styles_reliable: bool) -> list[int]:
    if not styles_reliable:
        return [max(c.depth, 1) for c in candidates]
    styles = sorted({c.style for c in candidates}, key=lambda s: (-s[0], not s[1]))
    rank = {style: i for i, style in enumerate(styles)}
    # Within one style, numbering depth separates "2." from "2.1".
    min_depth: dict[tuple[float, bool], int] = {}
    for c in candidates:
        if c.depth:
            min_depth[c.style] = min(min_depth.get(c.style, c.depth), c.depth)
    # A style whose unnumbered headings far outnumber its numbered ones uses the numbers for
    # the parts ("PART II", "Item 7."), and the unnumbered headings after one are its sections.
    numbered = Counter(c.style for c in candidates if c.depth)
    unnumbered = Counter(c.style for c in candidates if not c.depth)
    parts = {style for style, n in numbered.items() if unnumbered[style] >= _SECTIONS_PER_PART * n}
    keys: list[tuple[int, int]] = []
    last: dict[tuple[float, bool], int] = {}  # per style, the relative depth of its last numbered heading
    for c in candidates:
        if c.depth:
            depth = last[c.style] = c.depth - min_depth[c.style]
        else:
            depth = last[c.style] + 1 if c.style in parts and c.style in last else 0
        keys.append((rank[c.style], depth))
    order = {key: i + 1 for i, key in enumerate(sorted(set(keys)))}
    return [order[k] for k in keys]


def _promote_document_title(candidates: list[_Candidate], levels: list[int], page_count: int) -> list[int]:
    """An unnumbered top-level heading on the first pages whose section would run over most of
    the document (the name on a cover, "UNITED STATES SECURITIES AND EXCHANGE COMMISSION") is
    the document's title or its cover, not a part of it: what it would hold moves up a level,
    so the cover ends where the first section begins. Repeated while the cover's page holds
    such a heading (a cover of several lines, each larger than the next). A numbered one
    ("Part 1") is a part, however long."""
    if len(candidates) < 3:
        return levels
    levels = list(levels)
    cover: int | None = None  # the page of the first heading lifted: the cover's, where the rest must stand
    for _ in range(len(candidates)):
        tops = [i for i, level in enumerate(levels) if level == 1]
        for position, i in enumerate(tops):
            page = candidates[i].page
            if page > (_COVER_PAGES if cover is None else cover):
                return levels
            end = tops[position + 1] if position + 1 < len(tops) else len(candidates)
            last_page = candidates[end].page if end < len(candidates) else page_count
            if candidates[i].depth or end == i + 1 or last_page - page + 1 <= _TITLE_SHARE * page_count:
                continue
            lift = min(levels[i + 1 : end]) - 1  # the shallowest of what it holds becomes top-level
            for k in range(i + 1, end):
                levels[k] -= lift
            cover = page
            break
        else:
            return levels
    return levels


def detect_headings(
    layouts: list[PageLayout], furniture: frozenset[str], styles_reliable: bool = True
) -> list[Heading]:
    body = _body_size(layouts)
    candidates = _candidates(layouts, furniture, body, styles_reliable)
    candidates = _merge_wrapped(candidates)
    candidates = _drop_repeated_labels(candidates, len(layouts))
    if styles_reliable:
        candidates = _drop_front_page_styles(candidates, len(layouts))
        total_lines = sum(len(layout.lines) for layout in layouts)
        kept = _heading_styles(candidates, body, total_lines)
        candidates = [c for c in candidates if c.style in kept]
    if not candidates:
        return []
    levels = _promote_document_title(candidates, _levels(candidates, styles_reliable), len(layouts))
    return [
        Heading(level=lvl, title=c.text, page=c.page, opens_page=c.line == 0)
        for c, lvl in zip(candidates, levels, strict=True)
    ]


def build_layout_tree(
    layouts: list[PageLayout], furniture: frozenset[str], styles_reliable: bool = True
) -> list[TreeNode]:
    """Nodes from detected headings; empty when fewer than two headings were found."""
    headings = detect_headings(layouts, furniture, styles_reliable)
    if len(headings) < 2:
        return []
    return nest(headings, len(layouts))
