"""Conversations: a thread of turns, each a question, the standalone question it was asked as,
and its verified answer with citations and verdicts."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from shared.model.clock import utc_now
from shared.model.query import Citation, SentenceCheck
from shared.model.query_records import QueryRecord, QueryStatus

CHAT_TITLE_MAX_CHARS = 200
# A thread holds at most this many turns: a longer conversation starts a new thread (each turn
# is rewritten from the one before it, so nothing is lost).
CHAT_TURNS_MAX = 500


class ChatThread(BaseModel):
    chat_id: str
    tenant: str
    title: str = ""
    doc_ids: list[str] = Field(default_factory=list, description="The thread's documents; empty: all of the tenant's.")
    turns: int = 0
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)


class ChatTurn(BaseModel):
    chat_id: str
    turn: int = Field(description="1-based position in the thread.")
    question: str = Field(description="As the user asked it.")
    standalone: str = Field(description="What was asked of the documents: the follow-up completed.")
    rewrite_reason: str = Field(default="", description="Why the question was completed; empty: asked as it was.")
    doc_ids: list[str] = Field(default_factory=list, description="The documents asked over; empty: all.")
    query_id: str
    status: QueryStatus
    answer: str | None = None
    abstained: bool | None = None
    confidence: float | None = None
    citations: list[Citation] = Field(default_factory=list)
    sentences: list[SentenceCheck] = Field(default_factory=list)
    reason: str | None = Field(default=None, description="Why it failed, when it did.")
    asked_at: datetime = Field(default_factory=utc_now)

    @property
    def documents(self) -> set[str]:
        """Every document the turn was asked over or cites (a deleted one takes the thread along)."""
        return set(self.doc_ids) | {c.doc_id for c in self.citations}

    @classmethod
    def of(cls, chat_id: str, turn: int, question: str, standalone: str, rewrite_reason: str,
           record: QueryRecord) -> ChatTurn:
        """The turn of a query as it ended (answered, failed, or still pending)."""
        fields: dict[str, object] = {}
        if record.outcome is not None:
            answer = record.outcome.answer
            fields = {"answer": answer.answer, "abstained": answer.abstained, "confidence": answer.confidence,
                      "citations": answer.citations, "sentences": answer.sentences}
        return cls(chat_id=chat_id, turn=turn, question=question, standalone=standalone,
                   rewrite_reason=rewrite_reason, doc_ids=record.doc_ids, query_id=record.query_id,
                   status=record.status, reason=record.reason, **fields)
