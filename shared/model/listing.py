"""A page of the document listing, newest first."""

from __future__ import annotations

from pydantic import BaseModel, Field

from shared.model.documents import DocumentRecord

LIST_LIMIT_DEFAULT = 100
LIST_LIMIT_MAX = 1000


class DocumentPage(BaseModel):
    records: list[DocumentRecord]
    next_position: int | None = Field(
        default=None,
        description="Where the next page starts (the store's own position); None: this was the last page. "
        "A page filtered by status may hold fewer records than asked while more follow.",
    )
