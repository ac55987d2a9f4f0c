"""The citation format answers use, defined once: `[<document>, p. N]` or `[<document>, pp. N-M]`
(also `pp. N, M`). `<document>` is the file name, or the doc id when there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CITATION = re.compile(
    r"\[\s*(?P<doc>[^\[\]]+?)\s*,\s*(?P<kind>pp?)\.?\s*(?P<pages>\d+(?:\s*(?:[-–]|,|and)\s*\d+)*)\s*\]"
)


def format_citation(document: str, pages: list[int]) -> str:
    pages = sorted(set(pages))
    if len(pages) == 1:
        return f"[{document}, p. {pages[0]}]"
    if pages == list(range(pages[0], pages[-1] + 1)):
        return f"[{document}, pp. {pages[0]}-{pages[-1]}]"
    return f"[{document}, pp. {', '.join(str(p) for p in pages)}]"


@dataclass(frozen=True)
class ParsedCitation:
    document: str
    pages: tuple[int, ...]
    start: int
    end: int


def _expand(spec: str) -> list[int]:
    pages: list[int] = []
    for part in re.split(r"\s*(?:,|and)\s*", spec):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2:
            lo, hi = int(bounds[0]), int(bounds[1])
            if hi < lo or hi - lo > 50:  # a typo or a chapter range, not evidence pages
                pages.append(lo)
            else:
                pages.extend(range(lo, hi + 1))
        elif bounds[0]:
            pages.append(int(bounds[0]))
    return list(dict.fromkeys(pages))


def parse_citations(text: str) -> list[ParsedCitation]:
    """Every citation in `text`, in order."""
    return [
        ParsedCitation(m.group("doc").strip(), tuple(_expand(m.group("pages"))), m.start(), m.end())
        for m in CITATION.finditer(text)
    ]


def strip_citations(text: str) -> str:
    plain = re.sub(r"\s+", " ", CITATION.sub("", text))
    return re.sub(r"\s+([.,;:!?])", r"\1", plain).strip()
