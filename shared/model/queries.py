"""A query's record: what the client asked and how it ended (`GET /v1/queries/{id}`)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from shared.model.clock import utc_now
from shared.model.events import QueryOutcome, StageTiming
from shared.model.query import QuerySettings


class QueryStatus(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    FAILED = "failed"


class QueryRecord(BaseModel):
    query_id: str
    question: str
    doc_ids: list[str] = Field(default_factory=list)
    settings: QuerySettings = Field(default_factory=QuerySettings)
    tenant: str = "default"
    status: QueryStatus = QueryStatus.PENDING
    outcome: QueryOutcome | None = None
    reason: str | None = None
    failed_stage: str | None = None
    timings: list[StageTiming] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utc_now)
    finished_at: datetime | None = None
