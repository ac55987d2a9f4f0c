"""The text a sentence is checked against."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourcePage:
    """Text a sentence is checked against: a page of a document, or the context (page 0)."""

    doc_id: str
    page: int
    text: str
