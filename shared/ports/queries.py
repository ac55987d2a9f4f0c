"""Where queries and their results are kept (`GET /v1/queries/{id}` reads them)."""

from __future__ import annotations

from typing import Protocol

from shared.model.events import QueryOutcome, StageTiming
from shared.model.query_records import QueryRecord


class QueryStore(Protocol):
    async def create(self, record: QueryRecord) -> bool:
        """False when a query with this id already exists (the client retried)."""
        ...

    async def get(self, query_id: str) -> QueryRecord | None:
        """The finished record when there is one, else the pending one."""
        ...

    async def mark_answered(
        self, query_id: str, outcome: QueryOutcome, timings: list[StageTiming], seed: QueryRecord
    ) -> bool:
        """Store the answer unless one is stored already (an answer replaces a failure).
        True when this call stored it."""
        ...

    async def mark_failed(self, query_id: str, stage: str, reason: str, *, tenant: str = "default") -> bool:
        """Record a failure unless the query already has a result; True when this call stored it.

        Ids, the stage and the reason (cut to `REASON_MAX_CHARS`) only: never the question,
        settings or timings of the failed message, which may be what failed the stage. `get`
        completes the record with the pending row's question and settings."""
        ...

    async def count_owned(self, doc_id: str) -> int:
        """How many stored queries are asked over `doc_id` or cite it (each with its result)."""
        ...

    async def forget_document(self, doc_id: str) -> int:
        """Remove the stored queries asked over or citing `doc_id`, with their results; how many
        queries. Idempotent: after a stop midway, calling it again finishes."""
        ...
