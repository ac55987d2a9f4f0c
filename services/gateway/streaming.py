"""Server-sent events for a question waited on: `POST /v1/query` and the chat messages with
`Accept: text/event-stream`.

The stream opens at once with `accepted` (the query id, the question asked, its documents), so
a client shows progress before any stage has worked. When the verified answer arrives, each
sentence follows as its own `sentence` event (text, citation, verdict, evidence window), then
`answer` with the whole response; a failure or a timeout ends the stream with `error` (its
`status_code` and the body a plain request would get: the response of a failed or timed-out
query, an `ErrorBody` when a backend or stage is down) instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import StreamingResponse

from services.gateway.asking import StagesMissing
from services.gateway.errors import error_body
from services.gateway.outages import BackendUnavailable

EVENT_STREAM = "text/event-stream"


def wants_events(request: Request) -> bool:
    return EVENT_STREAM in request.headers.get("accept", "")


def event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def sentence_events(response: dict[str, Any]) -> list[bytes]:
    return [event("sentence", {"index": n, **sentence}) for n, sentence in enumerate(response.get("sentences", []))]


Outcome = tuple[int, dict[str, Any]]  # the status a plain request would get, and its body


def stream(accepted: dict[str, Any], answer: Callable[[], Awaitable[Outcome]], final: str = "answer") -> StreamingResponse:
    """`accepted` at once, then the sentences and the `final` event of what `answer()` gives."""

    async def events() -> AsyncIterator[bytes]:
        yield event("accepted", accepted)
        try:
            status, body = await answer()
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
        for chunk in sentence_events(body):
            yield chunk
        yield event(final, body)

    return StreamingResponse(events(), media_type=EVENT_STREAM,
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
