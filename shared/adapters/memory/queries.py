"""Queries and results kept in memory, with the Mongo store's rules: a query is answered once,
an answer replaces an earlier failure, a failure never replaces an answer."""

from __future__ import annotations

from shared.model.clock import utc_now
from shared.model.events import QueryOutcome, StageTiming
from shared.model.queries import QueryRecord, QueryStatus


class InMemoryQueryStore:
    def __init__(self) -> None:
        self.pending: dict[str, QueryRecord] = {}
        self.results: dict[str, QueryRecord] = {}

    async def create(self, record: QueryRecord) -> bool:
        if record.query_id in self.pending:
            return False
        self.pending[record.query_id] = record
        return True

    async def get(self, query_id: str) -> QueryRecord | None:
        return self.results.get(query_id) or self.pending.get(query_id)

    async def mark_answered(
        self, query_id: str, outcome: QueryOutcome, timings: list[StageTiming], seed: QueryRecord
    ) -> bool:
        stored = self.results.get(query_id)
        if stored is not None and stored.status != QueryStatus.FAILED:
            return False
        self.results[query_id] = seed.model_copy(update={
            "query_id": query_id, "status": QueryStatus.ANSWERED, "outcome": outcome, "timings": timings,
            "reason": None, "failed_stage": None, "finished_at": utc_now(),
        })
        return True

    async def mark_failed(
        self, query_id: str, stage: str, reason: str, timings: list[StageTiming], seed: QueryRecord
    ) -> bool:
        if query_id in self.results:
            return False
        self.results[query_id] = seed.model_copy(update={
            "query_id": query_id, "status": QueryStatus.FAILED, "reason": reason, "failed_stage": stage,
            "timings": timings, "finished_at": utc_now(),
        })
        return True

    async def forget_document(self, doc_id: str) -> int:
        def involves(record: QueryRecord) -> bool:
            cited = record.outcome is not None and any(c.doc_id == doc_id for c in record.outcome.answer.citations)
            return doc_id in record.doc_ids or cited

        removed = 0
        for records in (self.pending, self.results):
            for query_id in [q for q, r in records.items() if involves(r)]:
                del records[query_id]
                removed += 1
        return removed
