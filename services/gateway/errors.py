"""Error bodies: 422 that say what is wrong without sending the input back, and the HTTP
status of each refusal the application rules raise.

FastAPI's default answer to an invalid body lists every error with the offending `input`: a
megabyte question comes back whole. Here each error keeps where (`loc`), what (`msg`) and its
`type`; long location parts and messages are shortened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from shared.app.chats import ChatFull, ChatNotFound
from shared.app.documents import DocumentNotFound, DocumentNotReady, NothingToAsk
from shared.app.uploads import DocumentIdTaken
from shared.model.file_names import FileNameError
from shared.ports.repository import DocumentBeingDeleted

# The refusals of the application rules, answered as 409: the request is valid, the state of
# the documents does not allow it now.
CONFLICTS = (DocumentNotReady, NothingToAsk, DocumentIdTaken, DocumentBeingDeleted, ChatFull)

MAX_PART_CHARS = 64
MAX_MESSAGE_CHARS = 200
MAX_ERRORS = 20


def shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def error_details(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """The errors of a pydantic/FastAPI validation, without their input."""
    details = []
    for error in list(errors)[:MAX_ERRORS]:
        loc = [part if isinstance(part, int) else shortened(str(part), MAX_PART_CHARS) for part in error.get("loc", ())]
        details.append({"loc": loc, "msg": shortened(str(error.get("msg", "")), MAX_MESSAGE_CHARS),
                        "type": str(error.get("type", ""))})
    return details


def invalid(loc: tuple[str | int, ...], msg: str, error_type: str = "value_error") -> HTTPException:
    """A 422 a route raises itself, shaped like a validation error (`detail`: a list of `loc`,
    `msg`, `type`), as the OpenAPI schema declares every 422."""
    return HTTPException(422, [{"loc": list(loc), "msg": shortened(msg, MAX_MESSAGE_CHARS), "type": error_type}])


def detail_text(detail: Any) -> str:
    """An HTTP error's detail as one line of text (a validation list: its messages)."""
    if isinstance(detail, list):
        return "; ".join(str(error.get("msg", "")) for error in detail if isinstance(error, dict))
    return str(detail)


def refusal(exc: Exception) -> HTTPException:
    """The HTTP error of a refusal the application rules raise (see `REFUSALS`)."""
    if isinstance(exc, DocumentNotFound):
        return HTTPException(404, f"{exc}; GET /v1/documents (?file_name=NAME) lists the ids")
    if isinstance(exc, ChatNotFound):
        return HTTPException(404, f"{exc}; GET /v1/chats lists the chats")
    if isinstance(exc, NothingToAsk):
        return HTTPException(409, f"{exc} (POST /v1/documents)")
    if isinstance(exc, FileNameError):
        return invalid(("body", "file"), str(exc))
    return HTTPException(409, str(exc))


REFUSALS: tuple[type[Exception], ...] = (DocumentNotFound, ChatNotFound, FileNameError, *CONFLICTS)


def install_validation_handler(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        body: dict[str, Any] = {"detail": error_details(errors)}
        if len(errors) > MAX_ERRORS:
            body["more_errors"] = len(errors) - MAX_ERRORS
        return JSONResponse(body, status_code=422)

    async def refused(_: Request, exc: Exception) -> JSONResponse:
        error = refusal(exc)
        return JSONResponse({"detail": error.detail}, status_code=error.status_code)

    for kind in REFUSALS:
        app.add_exception_handler(kind, refused)
