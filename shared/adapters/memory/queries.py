"""Queries and results kept in memory, with the Mongo store's rules: a query is answered once,
an answer replaces an earlier failure, a failure never replaces an answer."""

from __future__ import annotations

from shared.model.clock import utc_now
from shared.model.events import QueryOutcome, StageTiming
from shared.model.query_records import REASON_MAX_CHARS, QueryRecord, QueryStatus


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
        result, pending = self.results.get(query_id), self.pending.get(query_id)
        if result is not None and result.status == QueryStatus.FAILED and pending is not None:
            return result.with_request(pending)
        return result or pending

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

    async def mark_failed(self, query_id: str, stage: str, reason: str, *, tenant: str = "default") -> bool:
        if query_id in self.results:
            return False
        now = utc_now()
        self.results[query_id] = QueryRecord(
            query_id=query_id, tenant=tenant, status=QueryStatus.FAILED, reason=reason[:REASON_MAX_CHARS],
            failed_stage=stage, created_at=now, finished_at=now,
        )
        return True

    def _owned(self, doc_id: str) -> set[str]:
        """Ids of the queries asked over `doc_id` or citing it."""
        def involves(record: QueryRecord) -> bool:
            cited = record.outcome is not None and any(c.doc_id == doc_id for c in record.outcome.answer.citations)
            return doc_id in record.doc_ids or cited

        return {q for records in (self.pending, self.results) for q, r in records.items() if involves(r)}

    async def count_owned(self, doc_id: str) -> int:
        return len(self._owned(doc_id))

    async def forget_document(self, doc_id: str) -> int:
        owned = self._owned(doc_id)
        for query_id in owned:
            self.pending.pop(query_id, None)
            self.results.pop(query_id, None)
        return len(owned)
