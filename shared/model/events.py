"""The typed events the services exchange over Kafka.

Every event names its topic (`TOPIC`), carries a correlation id (`doc_id` on document topics,
`query_id` on query topics, which is also the Kafka message key), and the envelope fields
`event_id`, `schema_version`, `tenant`, `produced_at`, `producer`.

Large payloads travel by reference: the PDF bytes live in GridFS and pages/trees in their
collections, so document events only name the document. Query events carry what the next stage
needs inline plus the QuerySettings, so every setting the API accepted is applied by every stage,
and the per-stage timings collected so far; the whole pages the navigator selects travel as
references (`Event.as_published`), read back from the store by the compressor.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.model.clock import utc_now
from shared.model.documents import BuilderName
from shared.model.formats import DocumentFormat
from shared.model.ids import BuilderChoice
from shared.model.query import (
    DOC_IDS_MAX,
    PATH_MAX_ENTRIES,
    CompressedContext,
    DocKey,
    NavigationResult,
    NavigationSummary,
    QueryId,
    QuerySettings,
    QuestionText,
    SentenceCheck,
    TraversalStats,
    VerifiedAnswer,
    VisitedSection,
)

SCHEMA_VERSION = 1


def new_id() -> str:
    return uuid.uuid4().hex


class Event(BaseModel):
    """Envelope shared by every event."""

    TOPIC: ClassVar[str] = ""

    event_id: str = Field(default_factory=new_id)
    schema_version: int = SCHEMA_VERSION
    tenant: str = Field(default="default", min_length=1, max_length=128)
    produced_at: datetime = Field(default_factory=utc_now)
    producer: str = Field(default="", description="Stage that produced the event, e.g. 'indexer'.")

    @property
    def key(self) -> str:
        """Kafka message key: the correlation id, so one document/query stays on one partition."""
        raise NotImplementedError

    def age_seconds(self, now: datetime | None = None) -> float:
        return max(0.0, ((now or utc_now()) - self.produced_at).total_seconds())

    def as_published(self) -> Event:
        """The event as a bus between processes carries it: what the next stage can read from
        the store goes by reference (an in-process bus hands the event itself)."""
        return self


# ---------------------------------------------------------------- document topics


class DocumentEvent(Event):
    doc_id: str

    @property
    def key(self) -> str:
        return self.doc_id


class IndexRequest(BaseModel):
    """What an upload asks of its indexing, validated where it is asked: an unknown field or a
    bad value is refused at the gateway (422), never a dead letter at the indexer. The rest of
    the indexer's options are its own settings."""

    model_config = ConfigDict(extra="forbid")

    builder: BuilderChoice = Field(default="auto", description="The tree builder: auto, outline, layout, windows or llm.")


class DocumentUploaded(DocumentEvent):
    TOPIC: ClassVar[str] = "document.uploaded"

    file_name: str
    size_bytes: int
    pdf_ref: str = Field(description="Where the bytes are: '<blob store>:<doc_id>', 'file:' or 'gridfs:'.")
    index_options: IndexRequest = Field(default_factory=IndexRequest, description="What the upload asks of its indexing.")
    rebuild: bool = Field(default=False, description="Index again even when a tree exists.")
    format: DocumentFormat | None = Field(
        default=None, description="The format the gateway read the upload as; None: the indexer sniffs it."
    )


class TreeBuilt(DocumentEvent):
    TOPIC: ClassVar[str] = "tree.built"

    file_name: str
    version: int
    page_count: int
    node_count: int
    builder: BuilderName | None = None
    build_seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)


class DocumentFailed(DocumentEvent):
    TOPIC: ClassVar[str] = "document.failed"

    file_name: str = ""
    stage: str
    reason: str
    error_type: str = ""


class DocumentDeleted(DocumentEvent):
    """A document and everything derived from it were removed from the store: stages drop
    what they keep of it in memory (indexes, page texts, cached answers)."""

    TOPIC: ClassVar[str] = "document.deleted"

    file_name: str = ""


# ---------------------------------------------------------------- query topics


class StageTiming(BaseModel):
    """How long one stage's input waited on the bus and how long the stage worked on it.

    `processing_ms` runs from the moment the stage's consumer received the message (before
    decoding it) to the moment the stage sent its output (its store writes included); the
    publisher closes it at the send (`shared.adapters.kafka.broker.Bus`). The broker's
    acknowledgement of that send overlaps the next stage's `queued_ms` and is measured by
    `treerag_publish_seconds`.
    """

    stage: str
    queued_ms: float
    processing_ms: float
    started_at: datetime | None = Field(default=None, description="When the stage received the message (UTC).")


class QueryEvent(Event):
    query_id: QueryId
    question: QuestionText
    doc_ids: list[DocKey] = Field(
        default_factory=list, max_length=DOC_IDS_MAX, description="Empty: route over all documents."
    )
    settings: QuerySettings = Field(default_factory=QuerySettings)
    timings: list[StageTiming] = Field(default_factory=list)
    documents: list[tuple[str, int]] = Field(
        default_factory=list, description="(doc_id, tree version) asked over; set by the navigator."
    )
    deadline: datetime | None = Field(
        default=None,
        description="When the client stops waiting (set by the gateway); stages drop the query after it.",
    )

    sealed_for: list[DocKey] = Field(
        default_factory=list,
        description="The documents whose keys seal this message's document text on the bus "
        "(shared/adapters/sealing.py); empty: its text is in the clear. Set when it is published.",
    )
    answer_key: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$",
        description="The answer-cache key the navigator computed (set by the navigator); the verifier "
        "stores the answer under it, so the key is computed in one place.",
    )
    progress: bool = Field(
        default=False,
        description="Its client streams the answer: the stages publish `query.progress` as they work "
        "(set by the gateway; nothing extra is published for a query nobody streams).",
    )

    @property
    def key(self) -> str:
        return self.query_id

    def expired(self, now: datetime | None = None) -> bool:
        return self.deadline is not None and (now or utc_now()) > self.deadline

    def carry(self) -> dict[str, Any]:
        """The fields every later event of the same query repeats."""
        return {
            "query_id": self.query_id,
            "question": self.question,
            "doc_ids": list(self.doc_ids),
            "settings": self.settings,
            "timings": list(self.timings),
            "documents": list(self.documents),
            "deadline": self.deadline,
            "tenant": self.tenant,
            "answer_key": self.answer_key,
            "progress": self.progress,
        }


class QueryReceived(QueryEvent):
    TOPIC: ClassVar[str] = "query.received"


class NodesSelected(QueryEvent):
    TOPIC: ClassVar[str] = "nodes.selected"

    navigation: NavigationResult

    def as_published(self) -> NodesSelected:
        """The selected whole pages as references: the compressor reads their text from the
        store, so a deleted document's pages are in no retained message."""
        return self.model_copy(update={"navigation": self.navigation.by_reference()})


class ContextCompressed(QueryEvent):
    TOPIC: ClassVar[str] = "context.compressed"

    navigation: NavigationSummary = Field(
        description="The mode, traversal stats, warnings and path of the navigation; no page text "
        "(the context carries the passages)."
    )
    context: CompressedContext


class QueryOutcome(BaseModel):
    """What a client gets back for a query: the verified answer and how it was found."""

    answer: VerifiedAnswer
    mode: str = Field(description="Navigation strategy used (dfs/beam).")
    mode_reason: str = ""
    stats: TraversalStats = Field(default_factory=TraversalStats)
    tokens_before: int = 0
    tokens_after: int = 0
    warnings: list[str] = Field(default_factory=list, description="Navigation and answer warnings.")
    path: list[VisitedSection] = Field(
        default_factory=list, max_length=PATH_MAX_ENTRIES,
        description="The sections the navigator visited, in order, the selected ones marked.",
    )


class AnswerVerified(QueryEvent):
    TOPIC: ClassVar[str] = "answer.verified"

    outcome: QueryOutcome


ProgressStep = Literal["routed", "draft", "sentence"]

PROGRESS_PAGES_MAX = 64
# Far longer than any answer a model is allowed to write (800 tokens), sealed (a third longer).
DRAFT_CHARS_MAX = 40_000


class QueryProgress(QueryEvent):
    """What a stage has done so far for a query its client streams: the documents and pages the
    navigator routed to (`routed`); the answer as a model writes it, unchecked (`draft`: `text`
    is what replaces the draft from character `index` on); or one answer sentence as soon as the
    verifier has checked it (`sentence`, its place in the answer in `index`). Best effort: the answer event is the truth,
    and a progress event lost or repeated changes nothing but when the client sees a sentence.
    Like a failure, it carries ids, never the question."""

    TOPIC: ClassVar[str] = "query.progress"

    question: QuestionText = ""
    step: ProgressStep
    pages: list[tuple[str, int]] = Field(
        default_factory=list, max_length=PROGRESS_PAGES_MAX,
        description="(doc_id, page) the navigator selected, best first (`routed`).",
    )
    index: int = Field(default=0, ge=0, description="The sentence's place in the answer (`sentence`); where "
                                                     "`text` goes in the draft (`draft`).")
    text: str = Field(default="", max_length=DRAFT_CHARS_MAX,
                      description="The draft from `index` on, as the model has written it (`draft`); the "
                                  "sentence as the answer's text shows it, its citation marker included, or "
                                  "empty when the answer leaves it out (`sentence`).")
    sentence: SentenceCheck | None = Field(default=None, description="The checked sentence (`sentence`).")

    @classmethod
    def of(cls, event: QueryEvent, step: ProgressStep, **fields: Any) -> QueryProgress:
        """Progress on `event`'s query: its ids, documents and deadline, and what `fields` say."""
        return cls(query_id=event.query_id, tenant=event.tenant, doc_ids=list(event.doc_ids),
                   documents=list(event.documents), deadline=event.deadline, progress=True, step=step, **fields)


class QueryFailed(QueryEvent):
    """A query ended without an answer. It carries the ids, the stage and the reason, never the
    question or settings of the failed message: those may be what made the stage fail."""

    TOPIC: ClassVar[str] = "query.failed"

    question: QuestionText = ""
    stage: str
    reason: str
    error_type: str = ""


# ---------------------------------------------------------------- dead letters


class DeadLetter(BaseModel):
    """What `<topic>.dlq` holds: the original message and why it was given up on."""

    event_id: str = Field(default_factory=new_id)
    produced_at: datetime = Field(default_factory=utc_now)
    stage: str
    topic: str
    partition: int
    offset: int
    key: str | None
    payload: str = Field(description="The original message body, as received (its start when `payload_truncated`).")
    payload_truncated: bool = False
    attempts: int
    error: str
    error_type: str = ""


DOCUMENT_EVENTS: tuple[type[DocumentEvent], ...] = (DocumentUploaded, TreeBuilt, DocumentFailed, DocumentDeleted)
QUERY_EVENTS: tuple[type[QueryEvent], ...] = (
    QueryReceived,
    NodesSelected,
    ContextCompressed,
    AnswerVerified,
    QueryFailed,
    QueryProgress,
)
ALL_TOPICS: tuple[str, ...] = tuple(e.TOPIC for e in (*DOCUMENT_EVENTS, *QUERY_EVENTS))


def dlq_topic(topic: str) -> str:
    return f"{topic}.dlq"
