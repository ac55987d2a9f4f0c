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


# A failure's reason is stored and shown; an error that quotes its input is cut to this.
REASON_MAX_CHARS = 1000


class QueryRecord(BaseModel):
    query_id: str
    question: str = Field(default="", description="Empty on a failure record (ids only): see `with_request`.")
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

    def with_request(self, pending: QueryRecord) -> QueryRecord:
        """This result with what the client asked (question, documents, settings) and whose it
        is taken from the pending record: a failure is stored by ids only, never with the failed
        message (which may not even have been readable)."""
        return self.model_copy(update={"question": pending.question, "doc_ids": pending.doc_ids,
                                       "settings": pending.settings, "created_at": pending.created_at,
                                       "tenant": pending.tenant})
