"""Identifiers every stage agrees on."""

from __future__ import annotations

import hashlib
from typing import Literal

# How a document's tree is built: the gateway accepts it, the indexer applies it.
BuilderChoice = Literal["auto", "outline", "layout", "windows", "llm"]


def content_id(data: bytes) -> str:
    """Document id: the content hash, so the same bytes always get the same id."""
    return hashlib.sha256(data).hexdigest()[:16]
