"""How a query stage tells the client that a query failed: one rule for every stage."""

from __future__ import annotations

from shared.model.events import QueryEvent, QueryFailed
from shared.model.queries import QueryRecord
from shared.ports.bus import Publisher
from shared.ports.queries import QueryStore


def query_seed(event: QueryEvent) -> QueryRecord:
    """The query's own fields, so a stored result is complete without the gateway's row."""
    return QueryRecord(
        query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
        settings=event.settings, tenant=event.tenant,
    )


async def report_query_failure(
    bus: Publisher, queries: QueryStore, event: QueryEvent, stage: str, error_type: str, reason: str
) -> None:
    """Store the failure (unless the query is answered already), then publish `query.failed`."""
    await queries.mark_failed(event.query_id, stage, reason, event.timings, query_seed(event))
    await bus.publish(
        QueryFailed(**event.carry(), producer=stage, stage=stage, reason=reason, error_type=error_type)
    )
