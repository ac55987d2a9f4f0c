"""Request body limits, enforced while the body streams in.

A multipart upload (one file or a batch) may be as large as TREERAG_MAX_REQUEST_BYTES (plus its
form framing), any other body as large as TREERAG_MAX_JSON_BYTES. A declared Content-Length over
the limit is refused before a byte of the body is read; a body without one (chunked) is refused
as soon as the bytes received pass the limit. Either way nothing past the limit is read, spooled
or held. Each file of an upload is then held to TREERAG_MAX_UPLOAD_BYTES by the route, from its
spooled size, before it is read into memory: the gateway's memory does not follow what a client
sends.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.errors import error_response
from shared.settings import Settings

# Boundaries, part headers and the small form fields beside the file.
MULTIPART_FRAMING_BYTES = 64 * 1024


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int, setting: str) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes ({setting}); send a smaller one")


def body_limit(headers: Headers, settings: Settings) -> tuple[int, str]:
    """The byte limit of a body with these headers, and the setting that sets it."""
    if headers.get("content-type", "").lower().startswith("multipart/"):
        return settings.max_request_bytes + MULTIPART_FRAMING_BYTES, "TREERAG_MAX_REQUEST_BYTES"
    return settings.max_json_bytes, "TREERAG_MAX_JSON_BYTES"


def declared_length(headers: Headers) -> int | None:
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


class BodyLimits:
    """ASGI middleware: the route reads the body through a `receive` that counts it."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        limit, setting = body_limit(headers, self.settings)
        length = declared_length(headers)
        if length is not None and length > limit:
            # Answered before reading: the server closes the connection instead of draining it.
            too_large = BodyTooLarge(limit, setting)
            await error_response(413, too_large.detail)(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Raised inside the route's body parsing: the app answers 413 like any HTTP error.
                    raise BodyTooLarge(limit, setting)
            return message

        await self.app(scope, counted, send)


def install_body_limits(app: FastAPI, settings: Settings) -> None:
    """Added first, so innermost: an over-limit body is an HTTP error the other middleware see
    and decorate (security headers, latency)."""
    app.add_middleware(BodyLimits, settings=settings)
