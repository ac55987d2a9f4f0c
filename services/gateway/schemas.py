"""Request and response bodies of the gateway's HTTP API."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.model.card import DocType, DocumentCard, DocumentPeriod
from shared.model.chats import CHAT_TITLE_MAX_CHARS
from shared.model.documents import BuilderName, DocumentRecord, DocumentStatus
from shared.model.events import QueryOutcome, StageTiming
from shared.model.formats import DocumentFormat
from shared.model.query import (
    DOC_IDS_MAX,
    QUESTION_MAX_CHARS,
    Citation,
    DocKey,
    NavigationMode,
    QuerySettings,
    SentenceCheck,
    TraversalStats,
    VisitedSection,
)
from shared.model.query_records import QueryRecord, QueryStatus
from shared.model.tree import TreeNode

QUERY_TIMEOUT_MAX_S = 600.0


class UploadAccepted(BaseModel):
    doc_id: str
    status: DocumentStatus
    file_name: str
    duplicate: bool = Field(default=False, description="The same bytes were uploaded before.")
    published: bool = Field(
        default=True,
        description="The indexing request is on the bus; false: Kafka did not answer in time and the "
        "gateway publishes it as soon as Kafka is back (nothing to do for the client).",
    )


class FileUploadResult(BaseModel):
    """One file of a several-file upload: accepted (`document`) or refused (`error`)."""

    file_name: str
    status_code: int = Field(description="202 when accepted; else the status a one-file upload would get.")
    document: UploadAccepted | None = None
    error: str | None = None


class UploadsAccepted(BaseModel):
    files: list[FileUploadResult] = Field(description="One result per file, in the order sent.")
    accepted: int
    refused: int


class DocumentOut(BaseModel):
    doc_id: str
    file_name: str
    format: DocumentFormat
    title: str
    status: DocumentStatus
    reason: str | None
    page_count: int
    builder: BuilderName | None
    version: int
    build_seconds: float
    warnings: list[str]
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, record: DocumentRecord) -> DocumentOut:
        return cls.model_validate(record.model_dump())


class ListedCard(BaseModel):
    """A card as a listing carries it: what the document is, whose and of which period, without
    the page labels, dates and sources (a filing's page labels run to thousands)."""

    title: str
    issuer: str
    subject: str
    doc_type: DocType
    period: DocumentPeriod


class ListedDocumentOut(DocumentOut):
    card: ListedCard | None = Field(
        default=None, description="The card's short form (GET /v1/documents/{doc_id} has the whole card); "
        "null for documents indexed before cards were read.",
    )

    @classmethod
    def of(cls, record: DocumentRecord) -> ListedDocumentOut:
        card = record.card.model_dump(include=set(ListedCard.model_fields)) if record.card is not None else None
        return cls.model_validate({**record.model_dump(exclude={"card"}), "card": card})


class DocumentDetailOut(DocumentOut):
    """One document with its whole card; listings carry its short form (`ListedCard`)."""

    card: DocumentCard | None = Field(
        default=None, description="What the document is, whose and of which period (read at indexing); "
        "null for documents indexed before cards were read.",
    )

    @classmethod
    def of(cls, record: DocumentRecord) -> DocumentDetailOut:
        return cls.model_validate(record.model_dump())


class DeletedOut(BaseModel):
    doc_id: str
    file_name: str
    queries_removed: int = Field(description="Stored queries asked over the document or citing it (each with its "
                                             "result), counted when the deletion started: they are removed in the "
                                             "background, with the document's pages, file and cached answers.")


class TreeOut(BaseModel):
    """A document's section tree: its top-level sections, each with its page range and children."""

    doc_id: str
    file_name: str
    version: int = Field(description="The document's version: bumped whenever the tree is rebuilt.")
    builder: BuilderName | None = Field(description="What built the tree (outline, layout, windows, llm).")
    nodes: list[TreeNode]


class PageOut(BaseModel):
    doc_id: str
    page: int
    text: str


class QueryRequest(BaseModel):
    """Validated whole before anything is stored or published: a bad field is a 422."""

    model_config = ConfigDict(populate_by_name=True, allow_inf_nan=False)

    question: str = Field(min_length=1, max_length=QUESTION_MAX_CHARS)
    doc_ids: list[DocKey] = Field(
        default_factory=list, max_length=DOC_IDS_MAX,
        description="Doc ids (GET /v1/documents lists them); empty: all documents.",
    )
    mode: NavigationMode | None = Field(default=None, description="Overrides settings.mode.")
    settings: QuerySettings = Field(
        default_factory=QuerySettings,
        description="Any QuerySettings field (max_depth, beam_width, token_budget...), each within its bounds.",
    )
    run_async: bool = Field(default=False, alias="async", description="Return 202 at once with the query_id.")
    timeout_s: float | None = Field(default=None, gt=0, le=QUERY_TIMEOUT_MAX_S, description="How long to wait for the answer.")


class Timings(BaseModel):
    total_ms: float | None = Field(description="From the request to the answer, at the gateway.")
    stages: list[StageTiming] = Field(description="Per stage: time queued on the bus and processing time.")


class QueryResponse(BaseModel):
    query_id: str
    status: QueryStatus
    question: str
    answer: str | None = None
    abstained: bool | None = None
    citations: list[Citation] = Field(default_factory=list)
    confidence: float | None = Field(
        default=None, description="The probability that the answer is right (see `assessment`)."
    )
    assessment: str | None = Field(
        default=None,
        description="The confidence in words: 'likely right', 'check the page' or 'probably not answered'; "
        "empty when the confidence is the cited pages' support alone (an answerer the calibration was not fitted on).",
    )
    sentences: list[SentenceCheck] = Field(
        default_factory=list, description="Each answer sentence's verdict and the evidence window on its cited page."
    )
    stated: bool | None = Field(
        default=None,
        description="False when the question asks for a figure no passage states: the sentences are the closest "
        "passages, not the answer.",
    )
    warnings: list[str] = Field(default_factory=list)
    mode: str | None = None
    mode_reason: str | None = None
    stats: TraversalStats | None = None
    path: list[VisitedSection] = Field(
        default_factory=list,
        description="The sections the navigator visited, in the order it entered them; `selected`: kept as evidence.",
    )
    tokens_before: int | None = None
    tokens_after: int | None = None
    reason: str | None = Field(default=None, description="Why the query failed, when it did.")
    failed_stage: str | None = None
    timings: Timings

    @classmethod
    def of(cls, record: QueryRecord, total_ms: float | None = None) -> QueryResponse:
        outcome: QueryOutcome | None = record.outcome
        if total_ms is None and record.finished_at is not None:
            total_ms = round((record.finished_at - record.created_at).total_seconds() * 1000, 3)
        fields: dict[str, Any] = {
            "query_id": record.query_id,
            "status": record.status,
            "question": record.question,
            "reason": record.reason,
            "failed_stage": record.failed_stage,
            "timings": Timings(total_ms=total_ms, stages=record.timings),
        }
        if outcome is not None:
            fields.update(
                answer=outcome.answer.answer,
                abstained=outcome.answer.abstained,
                citations=outcome.answer.citations,
                confidence=outcome.answer.confidence,
                assessment=outcome.answer.assessment,
                sentences=outcome.answer.sentences,
                stated=outcome.answer.stated,
                warnings=outcome.warnings,
                mode=outcome.mode,
                mode_reason=outcome.mode_reason,
                stats=outcome.stats,
                path=outcome.path,
                tokens_before=outcome.tokens_before,
                tokens_after=outcome.tokens_after,
            )
        return cls(**fields)


class QueryAccepted(BaseModel):
    query_id: str
    status: QueryStatus


class CitedPages(BaseModel):
    doc_id: DocKey = Field(description="Doc id, unique id prefix or file name.")
    pages: list[int] = Field(min_length=1, max_length=50)

    @field_validator("pages")
    @classmethod
    def _positive(cls, pages: list[int]) -> list[int]:
        if any(p < 1 for p in pages):
            raise ValueError("page numbers start at 1")
        return pages


class VerifyRequest(BaseModel):
    answer: str = Field(min_length=1, max_length=20_000, description="Text to check, sentence by sentence.")
    citations: list[CitedPages] = Field(min_length=1, max_length=20, description="The pages the answer rests on.")


class VerifyResponse(BaseModel):
    sentences: list[SentenceCheck] = Field(description="Each sentence's verdict, score, reason and evidence window.")
    supported: int
    contradicted: int
    unsupported: int
    confidence: float = Field(description="Mean sentence score, a contradicted sentence counting zero.")


class ChatCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="", max_length=CHAT_TITLE_MAX_CHARS)
    doc_ids: list[DocKey] = Field(default_factory=list, max_length=DOC_IDS_MAX,
                                  description="The chat's documents; empty: all of the tenant's.")


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    question: str = Field(min_length=1, max_length=QUESTION_MAX_CHARS)
    mode: NavigationMode | None = Field(default=None, description="Tree navigation strategy (dfs/beam/auto).")
    timeout_s: float | None = Field(default=None, gt=0, le=QUERY_TIMEOUT_MAX_S, description="How long to wait for the answer.")
