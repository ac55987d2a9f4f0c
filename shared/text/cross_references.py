"""Cross-references a text makes to another part of its document: "see Section 4.2", "in
Appendix B", "shown in Table 3". The indexer records each page's (`page_analysis.py`); the
navigator follows them from the pages it selects (`services/navigator/resolver.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Reference:
    kind: str
    label: str  # normalised number or letter, e.g. "3.2", "b", "7a"

    def __str__(self) -> str:
        return f"{self.kind} {self.label}"


# Explicit cross-references in running text ("see Section 4.2", "in Appendix B"): a caption
# ("Table 3: ...") or a heading is not a reference to somewhere else.
_TEXT_REFERENCE = re.compile(
    r"\b(?:see|in|of|cf\.?|under|refer to|described in|given in|shown in)\s+(?:also\s+)?"
    r"(section|chapter|appendix|table|figure|article|item)\s+([A-Z]\b|\d+(?:\.\d+)*[A-Z]?)",
    re.IGNORECASE,
)


def find_text_references(text: str) -> list[Reference]:
    """Cross-references made by a passage's text (one regular expression over the raw text)."""
    return list(_find_text_references(text))


@lru_cache(maxsize=4096)
def _find_text_references(text: str) -> tuple[Reference, ...]:
    found = [
        Reference(kind.lower(), label.lower().rstrip(".")) for kind, label in _TEXT_REFERENCE.findall(text)
    ]
    return tuple(dict.fromkeys(found))
