"""Cross-reference resolver: "Section 3.2", "Chapter 4", "Appendix B", "Item 7A", "Table 2",
제3조, 3장, 第2章, 第3節 ... found in a question or in selected text, matched to tree nodes.

Sections, chapters, articles, appendices, items and parts are matched to node titles (their
numbering); tables and figures are matched to the page whose text carries the caption, then to
the deepest node covering that page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from services.navigator.index import DocumentIndex
from shared.text.cross_references import Reference, find_text_references
from shared.text.normalize import normalize

__all__ = ["Reference", "ResolvedReference", "find_references", "find_text_references", "resolve"]

_NUM = r"(\d+(?:\.\d+)*)"
_ALNUM = r"([a-z]|\d+[a-z]?|[ivxlc]+)"

# (kind, pattern over normalised text); group 1 is the reference's number or letter.
_QUERY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("section", re.compile(rf"(?:\bsections?|\bsec\.|§)\s*{_NUM}")),
    ("chapter", re.compile(r"\b(?:chapter|ch\.)\s*(\d+|[ivxlc]+)\b")),
    ("article", re.compile(r"\b(?:article|art\.)\s*(\d+[a-z]?)\b")),
    ("appendix", re.compile(r"\bappendix\s+([a-z]|\d+)\b")),
    ("item", re.compile(r"\bitem\s+(\d+[a-z]?)\b")),
    ("part", re.compile(r"\bpart\s+(\d+|[ivx]+)\b")),
    ("table", re.compile(rf"\btables?\s+{_NUM}\b")),
    ("figure", re.compile(rf"\b(?:figures?|figs?\.)\s*{_NUM}\b")),
    ("article", re.compile(r"제\s*(\d+)\s*조")),
    ("article", re.compile(r"第\s*(\d+)\s*条")),
    ("chapter", re.compile(r"제?\s*(\d+)\s*장")),
    ("chapter", re.compile(r"第\s*(\d+)\s*章")),
    ("section", re.compile(r"第\s*(\d+)\s*[節节]")),
    ("section", re.compile(r"제\s*(\d+)\s*절")),
)


_CUE = re.compile(
    r"section|sec\.|§|chapter|ch\.|article|art\.|appendix|item|part|table|figure|fig|[조장절章節节条]", re.IGNORECASE
)


def find_references(text: str) -> list[Reference]:
    """Every distinct cross-reference in `text`, in order of appearance."""
    return list(_find_references(text))


@lru_cache(maxsize=4096)
def _find_references(text: str) -> tuple[Reference, ...]:
    if not _CUE.search(text):  # most text names nothing: skip the full scan
        return ()
    norm = normalize(text)
    found: list[tuple[int, Reference]] = []
    for kind, pattern in _QUERY_PATTERNS:
        for match in pattern.finditer(norm):
            found.append((match.start(), Reference(kind, match.group(1).rstrip("."))))
    found.sort(key=lambda item: item[0])
    return tuple(dict.fromkeys(ref for _, ref in found))


def _title_patterns(ref: Reference) -> list[re.Pattern[str]]:
    label = re.escape(ref.label)
    end = r"(?![\w.]*\d)(?:\b|$)" if ref.label[-1].isdigit() else r"\b"
    if ref.kind == "section":
        return [
            re.compile(rf"^(?:(?:section|sec\.?|§)\s*)?{label}(?!\.?\d){end}"),
            re.compile(rf"^第\s*{label}\s*[節节]"),
            re.compile(rf"^제\s*{label}\s*절"),
        ]
    if ref.kind == "chapter":
        return [
            re.compile(rf"^(?:chapter|ch\.)\s*{label}\b"),
            re.compile(rf"^第\s*{label}\s*章"),
            re.compile(rf"^제?\s*{label}\s*장"),
        ]
    if ref.kind == "article":
        return [
            re.compile(rf"^(?:article|art\.)\s*{label}\b"),
            re.compile(rf"^제\s*{label}\s*조"),
            re.compile(rf"^第\s*{label}\s*条"),
        ]
    if ref.kind in ("appendix", "item", "part"):
        return [re.compile(rf"^{ref.kind}\s+{label}\b")]
    if ref.kind in ("table", "figure"):
        word = "table" if ref.kind == "table" else r"(?:figure|fig\.)"
        return [re.compile(rf"^{word}\s*{label}{end}")]
    return []


def _bare_number_matches(ref: Reference, title: str, depth: int) -> bool:
    """"4 Data frames" is chapter 4 when it is top-level; "B Notes" is appendix B likewise."""
    if ref.kind == "chapter" and depth == 1:
        return re.match(rf"^{re.escape(ref.label)}(?:\.|\s|$)(?!\d)", title) is not None
    if ref.kind == "appendix" and depth == 1 and not ref.label.isdigit():
        return re.match(rf"^{re.escape(ref.label)}(?:\.|\s)(?!\d)", title) is not None
    return False


def _caption_page(index: DocumentIndex, ref: Reference) -> int | None:
    """First 1-based page whose text starts a line with the caption "Table N" / "Figure N"."""
    word = "table" if ref.kind == "table" else r"(?:figure|fig\.)"
    caption = re.compile(rf"(?:^|\n)\s*{word}\s*{re.escape(ref.label)}(?![\d.]*\d)\s*[:.\-—]?", re.IGNORECASE)
    mention = re.compile(rf"\b{word}\s*{re.escape(ref.label)}(?![\d.]*\d)", re.IGNORECASE)
    first_mention = None
    for number, text in enumerate(index.pages, start=1):
        if caption.search(text):
            return number
        if first_mention is None and mention.search(text):
            first_mention = number
    return first_mention


@dataclass(frozen=True)
class ResolvedReference:
    reference: Reference
    node: int  # flat index into index.nodes
    page: int | None  # the page that carries the referenced object, when known


# References resolved per document index, kept for the next question that names them; the
# oldest is forgotten past this many, so questions naming ever new references cannot grow it.
MAX_CACHED_REFERENCES = 1024


def resolve(index: DocumentIndex, references: list[Reference]) -> list[ResolvedReference]:
    """Nodes (and, for tables and figures, pages) that the references name."""
    resolved: list[ResolvedReference] = []
    cache = index.reference_cache
    for ref in references:
        if ref not in cache:
            while len(cache) >= MAX_CACHED_REFERENCES:
                cache.pop(next(iter(cache)))
            cache[ref] = _resolve_one(index, ref)
        if cache[ref] is not None:
            resolved.append(cache[ref])
    return resolved


def _resolve_one(index: DocumentIndex, ref: Reference) -> ResolvedReference | None:
    patterns = _title_patterns(ref)
    for flat, title in zip(index.nodes, index.normalised_titles, strict=True):
        if any(p.search(title) for p in patterns) or _bare_number_matches(ref, title, flat.depth):
            return ResolvedReference(ref, flat.index, None)
    if ref.kind in ("table", "figure") and index.has_pages:
        page = _caption_page(index, ref)
        if page is not None and int(index.page_to_deepest[page - 1]) >= 0:
            return ResolvedReference(ref, int(index.page_to_deepest[page - 1]), page)
    return None
