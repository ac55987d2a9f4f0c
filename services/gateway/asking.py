"""Asking the pipeline one question and waiting for its verified answer: the one way every
surface of the gateway (the query API, and any other door onto the same pipeline) puts a
question on the bus.

The pending row is written while the query is already on its way (the stages never read it;
it serves `GET /v1/queries/{id}`), and a query past its deadline is dropped by every stage, so an
overload drains instead of piling up.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from services.gateway.outages import bounded
from services.gateway.ports import Gateway
from services.gateway.stage_watch import QUERY_STAGES
from shared.adapters.logs import log_fields
from shared.adapters.metrics import INFLIGHT_QUERIES, record_finished_query
from shared.model.events import QueryReceived
from shared.model.query import QuerySettings
from shared.model.query_records import QueryRecord, QueryStatus

logger = logging.getLogger(__name__)

# Left of a query's timeout to write its 504 once no answer came: the request's budget ends at the
# timeout, and a response still being written then (a busy event loop) would become the budget's 503.
RESPOND_MARGIN_S = 0.25


class StagesMissing(RuntimeError):
    """No live process of a stage the query needs: nobody would answer it."""

    def __init__(self, missing: list[str], query_id: str) -> None:
        super().__init__("stage " + ", ".join(missing))
        self.missing = missing
        self.query_id = query_id


@dataclass(frozen=True)
class Question:
    """A validated question over resolved documents ([]: every document of the tenant)."""

    text: str
    doc_ids: list[str]
    settings: QuerySettings
    tenant: str
    timeout_s: float
    # Without a deadline a query stays owed however long it takes (an async one its client polls).
    deadline: bool = True
    progress: bool = False  # its client streams: the stages publish their progress
    query_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.perf_counter)

    def remaining_s(self) -> float:
        return self.timeout_s - (time.perf_counter() - self.started)


def query_outcome(finished: QueryRecord | None) -> str:
    """The outcome a finished query is counted under (`treerag_queries_total`)."""
    if finished is None:
        return "timeout"
    if finished.status == QueryStatus.FAILED or finished.outcome is None:
        return "failed"
    return "abstained" if finished.outcome.answer.abstained else "answered"


def pending_record(question: Question) -> QueryRecord:
    return QueryRecord(query_id=question.query_id, question=question.text, doc_ids=question.doc_ids,
                       settings=question.settings, tenant=question.tenant)


async def publish(gateway: Gateway, question: Question, record: QueryRecord) -> None:
    """Store the pending row and put the query on the bus, within the question's time."""
    deadline = record.created_at + timedelta(seconds=question.timeout_s) if question.deadline else None
    event = QueryReceived(query_id=question.query_id, question=question.text, doc_ids=question.doc_ids,
                          settings=question.settings, tenant=question.tenant, deadline=deadline,
                          progress=question.progress)
    timeout_s = max(0.1, min(gateway.settings.publish_timeout_s, question.remaining_s()))
    await asyncio.gather(gateway.queries.create(record), bounded(gateway.bus.publish(event), "Kafka", timeout_s))


async def ask(gateway: Gateway, question: Question) -> tuple[QueryRecord, QueryRecord | None]:
    """(the pending record, the finished one or None when none came in time). Raises
    `StagesMissing` at once when a stage the query needs has no live process."""
    if missing := await gateway.stages.missing(QUERY_STAGES):
        logger.warning("query refused: a stage has no live process", extra=log_fields(missing=missing))
        raise StagesMissing(missing, question.query_id)
    record = pending_record(question)
    gateway.waiter.expect(question.query_id)  # before publishing: an answer arriving at once is not missed
    INFLIGHT_QUERIES.inc()
    try:
        await publish(gateway, question, record)
        finished = gateway.deleted.withdrawn(
            await gateway.waiter.wait(question.query_id, question.remaining_s() - RESPOND_MARGIN_S))
    finally:
        gateway.waiter.forget(question.query_id)
        INFLIGHT_QUERIES.dec()
    record_finished_query(query_outcome(finished), finished.timings if finished else [])
    if finished is not None and finished.status == QueryStatus.FAILED:
        finished = finished.with_request(record)  # a failure carries ids only
    return record, finished
