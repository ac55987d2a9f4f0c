"""Document records and the result of indexing one PDF."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from shared.model.clock import utc_now
from shared.model.tree import TreeNode


class BuilderName(StrEnum):
    OUTLINE = "outline"
    LAYOUT = "layout"
    WINDOWS = "windows"
    LLM = "llm"


class DocumentStatus(StrEnum):
    UPLOADED = "uploaded"
    INDEXING = "indexing"
    READY = "ready"
    FAILED = "failed"


class DocumentRecord(BaseModel):
    doc_id: str = Field(description="SHA-256 of the PDF bytes (hex, first 16 chars).")
    file_name: str
    title: str = ""
    page_count: int = 0
    builder: BuilderName | None = None
    build_seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    status: DocumentStatus = DocumentStatus.UPLOADED
    reason: str | None = Field(default=None, description="Why indexing failed, when it did.")
    tenant: str = "default"
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    version: int = Field(default=1, description="Bumped whenever the tree is rebuilt.")


class DocumentTree(BaseModel):
    doc_id: str
    nodes: list[TreeNode]


class IndexedDocument(BaseModel):
    """Everything one indexing run produces: stored as record, pages and tree."""

    record: DocumentRecord
    pages: list[str] = Field(description="Page text; pages[0] is physical page 1.")
    tree: DocumentTree
