"""How a query stage tells the client that a query failed: one rule for every stage.

A failure is reported from ids (a `Failure`), never from the failed message: its question or
settings may be what made the stage fail, and recording the failure must not fail the same way.
"""

from __future__ import annotations

import logging

from shared.model.delivery import Failure
from shared.model.events import QueryEvent, QueryFailed
from shared.model.query_records import QueryRecord
from shared.ports.bus import Publisher
from shared.ports.queries import QueryStore

logger = logging.getLogger(__name__)


def query_seed(event: QueryEvent) -> QueryRecord:
    """The query's own fields, so a stored result is complete without the gateway's row."""
    return QueryRecord(
        query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
        settings=event.settings, tenant=event.tenant,
    )


def query_failure(event: QueryEvent, stage: str, error_type: str, reason: str) -> Failure:
    """A failure a stage decides on itself (not the delivery layer's give-up)."""
    return Failure(stage, event.TOPIC, event.query_id, error_type, reason, 1, tenant=event.tenant,
                   deadline=event.deadline, timings=tuple(event.timings))


async def report_query_failure(bus: Publisher, queries: QueryStore, failure: Failure) -> None:
    """Store the failure unless the query has a result already, and publish `query.failed` when
    this call stored it (a query fails once). When the store cannot be written, `query.failed`
    is still published, then the store's error raised."""
    if failure.key is None:
        logger.warning("a message without a query id failed; no query to report it on")
        return
    try:
        stored = await queries.mark_failed(failure.key, failure.stage, failure.reason, tenant=failure.tenant)
    except Exception:
        await _publish(bus, failure)
        raise
    if stored:
        await _publish(bus, failure)


async def _publish(bus: Publisher, failure: Failure) -> None:
    assert failure.key is not None
    await bus.publish(QueryFailed(
        query_id=failure.key, tenant=failure.tenant, deadline=failure.deadline, timings=list(failure.timings),
        producer=failure.stage, stage=failure.stage, reason=failure.reason, error_type=failure.error_type,
    ))
