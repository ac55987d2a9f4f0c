"""Waiting for the answer of one query, whichever gateway replica published it.

Every replica consumes `answer.verified` and `query.failed` in its own consumer group (unique
per process, from the latest offset), so each sees every answer and resolves only the futures
of the requests it holds. The query's stored result is polled as a backstop (after 1 s, then
after 2 s, then every 4 s): an event published before this replica's consumer had its
partitions (or during a rebalance) is still found there.
"""

from __future__ import annotations

import asyncio
import logging
import time

from shared.model.events import AnswerVerified, QueryFailed
from shared.model.query_records import QueryRecord, QueryStatus
from shared.ports.queries import QueryStore

logger = logging.getLogger(__name__)


def record_from_event(event: AnswerVerified | QueryFailed) -> QueryRecord:
    base = QueryRecord(
        query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
        settings=event.settings, tenant=event.tenant, timings=event.timings, finished_at=event.produced_at,
    )
    if isinstance(event, AnswerVerified):
        return base.model_copy(update={"status": QueryStatus.ANSWERED, "outcome": event.outcome})
    return base.model_copy(
        update={"status": QueryStatus.FAILED, "reason": event.reason, "failed_stage": event.stage}
    )


class AnswerWaiter:
    def __init__(self, queries: QueryStore, poll_interval_s: float = 1.0,
                 max_poll_interval_s: float = 4.0) -> None:
        self.queries = queries
        self.poll_interval_s = poll_interval_s
        self.max_poll_interval_s = max_poll_interval_s
        self._pending: dict[str, asyncio.Future[QueryRecord]] = {}

    @property
    def pending(self) -> int:
        return len(self._pending)

    def expect(self, query_id: str) -> None:
        """Call before publishing the query, so an answer arriving at once is not missed."""
        self._pending[query_id] = asyncio.get_running_loop().create_future()

    def forget(self, query_id: str) -> None:
        """Stop waiting for `query_id` (also when publishing it failed)."""
        self._pending.pop(query_id, None)

    def resolve(self, event: AnswerVerified | QueryFailed) -> bool:
        """Hand the event to the request waiting for it; False when this replica holds none."""
        future = self._pending.get(event.query_id)
        if future is None or future.done():
            return False
        future.set_result(record_from_event(event))
        return True

    async def wait(self, query_id: str, timeout_s: float) -> QueryRecord | None:
        """The finished query record, or None when none came within `timeout_s`."""
        future = self._pending.get(query_id)
        if future is None:
            raise KeyError(f"query {query_id} was not registered with expect()")
        deadline = time.monotonic() + timeout_s
        interval = self.poll_interval_s
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                try:
                    return await asyncio.wait_for(asyncio.shield(future), min(interval, remaining))
                except TimeoutError:
                    pass
                # A missed event is rare (a rebalance): poll less and less often, so that many
                # slow queries under load do not add a database read each per second.
                interval = min(interval * 2, self.max_poll_interval_s)
                stored = await self.queries.get(query_id)
                if stored is not None and stored.status != QueryStatus.PENDING:
                    logger.info("answer found by polling", extra={"fields": {"query_id": query_id}})
                    return stored
        finally:
            self.forget(query_id)
