"""Answers that cite a document deleted while they were computed are not served.

A query past the navigator when a deletion started can still be answered from the document's
pages; `DELETE` has returned by the time its answer reaches the gateway. Each gateway notes the
documents deleted lately (its own deletions, and every replica's through `document.deleted`)
for as long as a query started before them may still be answered, and turns such an answer into
a failure that says to ask again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from shared.model.query_records import QueryRecord, QueryStatus

STAGE = "gateway"
# Deletions remembered at most (the oldest go first; each is kept `keep_s` anyway).
MAX_REMEMBERED = 10_000


class RecentDeletions:
    def __init__(self, keep_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep_s = keep_s
        self.clock = clock
        self._at: OrderedDict[str, float] = OrderedDict()

    def note(self, doc_id: str) -> None:
        self._at[doc_id] = self.clock()
        self._at.move_to_end(doc_id)
        self._expire()

    def __contains__(self, doc_id: object) -> bool:
        self._expire()
        return doc_id in self._at

    def _expire(self) -> None:
        now = self.clock()
        while self._at and (len(self._at) > MAX_REMEMBERED or now - next(iter(self._at.values())) > self.keep_s):
            self._at.popitem(last=False)

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
