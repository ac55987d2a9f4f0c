"""The progress of the streamed queries this replica holds, handed to their streams.

Every replica reads every `query.progress` message (its own group, as answers are read) and
keeps only those of the streams it serves: a message of another replica's query is dropped before
its text is opened. Each stream's queue is bounded; a progress event that finds it full is
dropped, as the answer event carries everything it said.
"""

from __future__ import annotations

import asyncio

from shared.model.events import QueryProgress

QUEUED_PER_STREAM = 256


class ProgressHub:
    def __init__(self, queued_per_stream: int = QUEUED_PER_STREAM) -> None:
        self.queued_per_stream = queued_per_stream
        self._streams: dict[str, asyncio.Queue[QueryProgress]] = {}

    @property
    def streams(self) -> int:
        return len(self._streams)

    def listen(self, query_id: str) -> asyncio.Queue[QueryProgress]:
        """Call before the query is published, so no progress of it is missed."""
        queue: asyncio.Queue[QueryProgress] = asyncio.Queue(self.queued_per_stream)
        self._streams[query_id] = queue
        return queue

    def forget(self, query_id: str) -> None:
        self._streams.pop(query_id, None)

    def holds(self, event: QueryProgress) -> bool:
        return event.query_id in self._streams

    def deliver(self, event: QueryProgress) -> bool:
        """Hand `event` to its stream; False when this replica serves none, or its queue is full."""
        queue = self._streams.get(event.query_id)
        if queue is None or queue.full():
            return False
        queue.put_nowait(event)
        return True
