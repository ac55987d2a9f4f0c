"""Server-sent events for a question waited on: `POST /v1/query` and the chat messages with
`Accept: text/event-stream`.

The stream opens at once with `accepted` (the query id, the question asked, its documents), so
a client shows progress before any stage has worked. While the stages work, what they publish as
`query.progress` follows: `routed` (the documents asked over and the pages the navigator will
read); with a model answering, `draft` as it writes (the answer so far is the previous draft's
first `offset` characters followed by `text`; unchecked); and each answer sentence as its own
`sentence` event (index, text, citation, verdict, evidence window) as soon as the verifier has
checked it. When the verified answer arrives, any
sentence not streamed yet follows, then `answer` with the whole response; a failure or a timeout
ends the stream with `error` (its `status_code` and the body a plain request would get: the
response of a failed or timed-out query, an `ErrorBody` when a backend or stage is down) instead.
Each sentence is sent once, in the answer's order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

from fastapi import Request
from fastapi.responses import StreamingResponse

from services.gateway.asking import StagesMissing
from services.gateway.errors import error_body
from services.gateway.outages import BackendUnavailable
from services.gateway.progress import ProgressHub
from shared.adapters.logs import log_fields
from shared.model.events import QueryProgress

logger = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
Item = TypeVar("Item")


def wants_events(request: Request) -> bool:
    return EVENT_STREAM in request.headers.get("accept", "")


def event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class InOrder(Generic[Item]):
    """Items told by their place, handed on in that order, each once: progress events are not
    ordered, so one told ahead of the one before it waits for it."""

    def __init__(self) -> None:
        self.next_index = 0
        self._waiting: dict[int, Item] = {}

    def add(self, index: int, item: Item) -> list[tuple[int, Item]]:
        """The items ready now, `item` among them once all before it have come."""
        if index >= self.next_index:
            self._waiting.setdefault(index, item)
        ready: list[tuple[int, Item]] = []
        while self.next_index in self._waiting:
            ready.append((self.next_index, self._waiting.pop(self.next_index)))
            self.next_index += 1
        return ready

    def clear(self) -> None:
        self._waiting.clear()


class SentencesSent:
    """The sentence events of one stream, each sent once and in the answer's order."""

    def __init__(self) -> None:
        self._order: InOrder[dict[str, Any]] = InOrder()

    def add(self, index: int, sentence: dict[str, Any]) -> Iterator[bytes]:
        for ready, item in self._order.add(index, sentence):
            yield event("sentence", {"index": ready, **item})

    def rest(self, response: dict[str, Any]) -> Iterator[bytes]:
        """The answer's sentences not sent yet (the answer's own, not the streamed ones)."""
        self._order.clear()
        for index, sentence in enumerate(response.get("sentences", [])):
            yield from self.add(index, sentence)


async def heard(queue: asyncio.Queue[QueryProgress] | None, answering: asyncio.Future[Any]
                ) -> AsyncIterator[QueryProgress]:
    """The progress `queue` receives while `answering` runs, then what it already holds."""
    while queue is not None and not answering.done():
        waiting = asyncio.ensure_future(queue.get())
        await asyncio.wait({answering, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():
            waiting.cancel()
            break
        yield waiting.result()
    while queue is not None and not queue.empty():
        yield queue.get_nowait()


def progress_event(progress: QueryProgress, sentences: SentencesSent) -> Iterator[bytes]:
    if progress.step == "routed":
        yield event("routed", {"documents": [doc_id for doc_id, _ in progress.documents],
                               "pages": [{"doc_id": doc_id, "page": page} for doc_id, page in progress.pages]})
    elif progress.step == "draft":
        yield event("draft", {"offset": progress.index, "text": progress.text})
    elif progress.sentence is not None:
        yield from sentences.add(progress.index, progress.sentence.model_dump(mode="json"))


Outcome = tuple[int, dict[str, Any]]  # the status a plain request would get, and its body


# Answers whose client left while they were computed, kept to the end (`finish_on_leave`).
_FINISHING: set[asyncio.Future[Outcome]] = set()


def stream(accepted: dict[str, Any], answer: Callable[[], Awaitable[Outcome]], final: str = "answer",
           progress: ProgressHub | None = None, finish_on_leave: bool = False) -> StreamingResponse:
    """`accepted` at once, then the progress `progress` receives for the query (`accepted`'s
    `query_id`) while `answer()` runs, then the sentences and the `final` event of what it gives.
    When the client leaves first, `answer()` is no longer waited for; with `finish_on_leave` it
    still runs to its end (a chat's turn is stored though nobody reads the stream), bounded by
    the query's own timeout."""

    async def events() -> AsyncIterator[bytes]:
        query_id = accepted["query_id"]
        queue = progress.listen(query_id) if progress is not None else None
        sentences = SentencesSent()
        answering = asyncio.ensure_future(answer())
        try:
            yield event("accepted", accepted)
            async for progress_heard in heard(queue, answering):
                for chunk in progress_event(progress_heard, sentences):
                    yield chunk
            try:
                status, body = await answering
            except StagesMissing as exc:
                yield event("error", {"status_code": 503, **error_body(503, f"{exc} has no live process; retry shortly",
                                                                       unavailable=str(exc), query_id=exc.query_id)})
                return
            except BackendUnavailable as exc:
                yield event("error", {"status_code": 503, **error_body(503, f"{exc}; retry shortly",
                                                                       unavailable=exc.backend)})
                return
            if status != 200:
                yield event("error", {**body, "status_code": status})
                return
            for chunk in sentences.rest(body):
                yield chunk
            yield event(final, body)
        finally:
            if progress is not None:
                progress.forget(query_id)
            if not answering.done() and finish_on_leave:  # the client went away: the turn is still kept
                _FINISHING.add(answering)
                answering.add_done_callback(_finished)
            elif not answering.done():  # the client went away: the question is not waited for
                answering.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await answering

    return StreamingResponse(events(), media_type=EVENT_STREAM,
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _finished(task: asyncio.Future[Outcome]) -> None:
    _FINISHING.discard(task)
    if not task.cancelled() and task.exception() is not None:
        logger.warning("an answer whose client had left failed", extra=log_fields(error=type(task.exception()).__name__))
