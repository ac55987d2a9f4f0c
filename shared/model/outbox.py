"""An event whose publication is owed: recorded in the store before the write that needs it,
removed once the broker has it (see `shared/app/outbox.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from shared.model.clock import utc_now


class OutboxEntry(BaseModel):
    entry_id: str = Field(description="The event's id: consumers that see it twice skip the second.")
    topic: str = Field(description="The event's topic name, without the deployment's prefix.")
    key: str = Field(description="The event's correlation id (doc_id or query_id).")
    payload: str = Field(description="The event as JSON.")
    created_at: datetime = Field(default_factory=utc_now)
    due_at: datetime = Field(description="When the relay may publish it (a claim pushes it later).")
    attempts: int = 0
