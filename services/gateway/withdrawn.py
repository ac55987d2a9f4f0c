"""Answers that cite a document deleted while they were computed are not served.

A query past the navigator when a deletion started can still be answered from the document's
pages; `DELETE` has returned by the time its answer reaches the gateway. Each gateway notes the
documents deleted lately (its own deletions, and every replica's through `document.deleted`)
for as long as a query started before them may still be answered, and turns such an answer into
a failure that says to ask again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from shared.model.lru import Lru
from shared.model.query_records import QueryRecord, QueryStatus

STAGE = "gateway"
# Deletions remembered at most (the oldest go first; each is kept `keep_s` anyway).
MAX_REMEMBERED = 10_000


class RecentDeletions:
    def __init__(self, keep_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep_s = keep_s
        self.clock = clock
        self._at: Lru[str, float] = Lru(MAX_REMEMBERED)

    def note(self, doc_id: str) -> None:
        self._at.put(doc_id, self.clock())

    def __contains__(self, doc_id: object) -> bool:
        noted = self._at.peek(doc_id) if isinstance(doc_id, str) else None
        return noted is not None and self.clock() - noted <= self.keep_s

    def withdrawn(self, record: QueryRecord | None) -> QueryRecord | None:
        """`record`, or, when its answer cites a document deleted lately, a failure saying so."""
        if record is None or record.outcome is None:
            return record
        gone = sorted({c.doc_id for c in record.outcome.answer.citations if c.doc_id in self})
        if not gone:
            return record
        return record.model_copy(update={
            "status": QueryStatus.FAILED, "outcome": None, "failed_stage": STAGE,
            "reason": f"document {gone[0]} was deleted while the question was answered; ask again",
        })
