"""Deletions finished off the request path.

`DELETE /v1/documents/{id}` answers once the document is unreadable (shared/app/deletion.py);
what was made from it is removed here, in the background, retried until it is done. A gateway
that stops midway leaves the record `deleting`: the next one to start finishes it.

A query that was already past the navigator when the deletion started may still store its
result (or a cached answer) afterwards, noting it in the document's ledger again. Those late
rows are removed by a second pass once every such query has met its deadline, and any left by a
query with no deadline are removed when a gateway next starts (ledgers without a record).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from services.gateway.store import GatewayStore
from shared.app.deletion import finish_deletion
from shared.ports.chats import ChatStore
from shared.ports.document_keys import DocumentKeys
from shared.ports.queries import QueryStore

logger = logging.getLogger(__name__)

# Waits between attempts at a deletion that failed (MongoDB down): the last one repeats.
RETRY_DELAYS_S = (1.0, 5.0, 30.0)


class BackgroundDeletions:
    """`late_writes_s`: how long after a deletion a query started before it may still store
    its result (the longest query deadline)."""

    def __init__(self, repo: GatewayStore, queries: QueryStore, late_writes_s: float,
                 chats: ChatStore | None = None, keys: DocumentKeys | None = None) -> None:
        self.repo = repo
        self.queries = queries
        self.chats = chats
        self.keys = keys
        self.late_writes_s = late_writes_s
        self._tasks: set[asyncio.Task[None]] = set()

    def finish(self, doc_id: str) -> None:
        """Remove the rest of a document whose deletion has started."""
        self._spawn(self._finish(doc_id))

    def resume(self) -> None:
        """Finish the deletions a stopped gateway left, and remove late rows left without a
        record: run when a gateway starts."""
        self._spawn(self._resume())

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(self, doc_id: str) -> None:
        async def finish() -> None:
            await finish_deletion(doc_id, self.repo, self.queries, self.chats, self.keys)

        await self._retried(doc_id, finish)
        await asyncio.sleep(self.late_writes_s)
        await self._retried(doc_id, lambda: self._remove_late_rows(doc_id))

    async def _remove_late_rows(self, doc_id: str) -> None:
        """Only stored queries and cached answers: a document uploaded again meanwhile keeps its
        file and pages (its file is stored before its record)."""
        if await self.repo.get_document(doc_id) is not None or await self.repo.being_deleted(doc_id):
            return
        queries = await self.queries.forget_document(doc_id)
        cached = await self.repo.forget_cached(doc_id)
        if self.chats is not None:
            await self.chats.forget_document(doc_id)  # a turn answered while the deletion ran
        if queries or cached:
            logger.info("late rows of a deleted document removed",
                        extra={"fields": {"doc_id": doc_id, "queries": queries, "cached": cached}})

    async def _resume(self) -> None:
        try:
            interrupted = [record.doc_id for record in await self.repo.deleting_documents()]
            leftovers = await self.repo.owned_leftovers()
        except Exception:
            logger.exception("interrupted deletions not looked up; they finish at the next start")
            return
        if interrupted or leftovers:
            logger.info("finishing interrupted deletions",
                        extra={"fields": {"documents": len(interrupted), "leftovers": len(leftovers)}})
        for doc_id in interrupted:
            self.finish(doc_id)
        for doc_id in leftovers:
            await self._retried(doc_id, functools.partial(self._remove_late_rows, doc_id))

    async def _retried(self, doc_id: str, attempt: Callable[[], Awaitable[None]]) -> None:
        tried = 0
        while True:
            try:
                await attempt()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                delay = RETRY_DELAYS_S[min(tried, len(RETRY_DELAYS_S) - 1)]
                logger.warning("deletion stopped; retrying", exc_info=True,
                               extra={"fields": {"doc_id": doc_id, "retry_in_s": delay}})
                await asyncio.sleep(delay)
                tried += 1

    async def wait(self) -> None:
        """Until every deletion started so far has finished (its late-rows pass included)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Stop: a deletion cut short stays `deleting` and is finished by the next start."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
