"""Error bodies: one shape for every error the gateway answers, the HTTP status of each refusal
the application rules raise, and the error statuses each route declares in the OpenAPI schema.

Every 4xx and 5xx error body is an `ErrorBody`:

    {"error": {"code": "not_found", "message": "no document ...", "type": "invalid_request_error",
               "param": null},
     "detail": "no document ..."}

`error` is the shape OpenAI's API gives its errors (its SDKs read `message`, `type` and `code`), so
the OpenAI-compatible routes answer in the same shape as every other route; `code` is stable for
programs, `message` says what to do. `detail` carries the message as FastAPI clients read it; a
422's `detail` is the list of field errors. A 503 adds `unavailable` (what did not answer) and,
for a refused query, its `query_id`.

FastAPI's default answer to an invalid body lists every error with the offending `input`: a
megabyte question comes back whole. Here each error keeps where (`loc`), what (`msg`) and its
`type`; long location parts and messages are shortened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.utils import is_body_allowed_for_status_code
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

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

# `error.code` of each status, and the narrower codes some routes give.
CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid_request", 429: "rate_limited",
    500: "internal_error", 503: "unavailable", 504: "timeout",
}
NARROWER_CODES = {"not_ready": "/readyz's 503", "query_timeout": "a chat completion's 504"}

# What each declared error status means, unless a route says more precisely.
STATUS_MEANINGS = {
    400: "The request is malformed (a multipart body that does not parse, an empty file, a cursor that is not one "
         "of ours).",
    401: "No API key, or one that is not valid: send `Authorization: Bearer <key>` (see `WWW-Authenticate`).",
    403: "The caller's role (its key's, or its sign-in's) is below the one the route needs: `message` names it.",
    404: "Not found for the caller's tenant (another tenant's ids are not found either).",
    409: "Valid, but the state of the documents does not allow it now: `message` says why.",
    413: "The body is larger than TREERAG_MAX_JSON_BYTES, or an upload than TREERAG_MAX_REQUEST_BYTES (a file: "
         "TREERAG_MAX_UPLOAD_BYTES; a batch: more than 100 files).",
    415: "Not a document the indexer reads (PDF, DOCX, HTML, Markdown or text), or a `.pdf` without a PDF header.",
    422: "The request does not validate: `detail` lists each error's `loc`, `msg` and `type` (never the input).",
    429: "Over the key's request budget, or too many invalid keys from this address: retry after `Retry-After` s.",
    503: "Kafka, MongoDB or a stage the request needs is down or too slow, or the gateway did not finish in time: "
         "`unavailable` names it; retry after `Retry-After` s.",
}


class FieldError(BaseModel):
    loc: list[str | int] = Field(description="Where: `body`, `query` or `path`, then the field names.")
    msg: str
    type: str


class ErrorInfo(BaseModel):
    code: str = Field(description="What went wrong, for programs: one per status ("
                      + ", ".join(f"{status} {code}" for status, code in CODES.items()) + "), or "
                      + ", ".join(f"{code} ({where})" for code, where in NARROWER_CODES.items()) + ".")
    message: str = Field(description="What went wrong and what to do about it.")
    type: str = Field(description="The error's kind as OpenAI's API names it: `invalid_request_error`, "
                                  "`authentication_error` or `server_error`.")
    param: str | None = Field(default=None, description="The request field at fault, when one is (a 422).")


class ErrorBody(BaseModel):
    """Every error the gateway answers."""

    error: ErrorInfo
    detail: str | list[FieldError] = Field(description="The message; for a 422, each field error.")
    unavailable: str | None = Field(default=None, description="A 503's what did not answer: Kafka, MongoDB, a "
                                    "stage a query needs (`stage navigator`: no live process), or the gateway "
                                    "itself (starting, or slower than the request's budget while both answer).")
    query_id: str | None = Field(default=None, description="A refused query's id, to find it in the logs.")
    more_errors: int | None = Field(default=None, description="A 422's field errors past the first 20.")


def error_responses(*statuses: int, meanings: Mapping[int, str] | None = None) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI `responses` of these error statuses, each an `ErrorBody`; `meanings` words a
    status for one route."""
    meanings = meanings or {}
    return {status: {"model": ErrorBody, "description": meanings.get(status) or STATUS_MEANINGS[status]}
            for status in statuses}


# Declared on every route that takes an API key (all but the probes).
KEYED = (401, 429)


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
    `msg`, `type`)."""
    return HTTPException(422, [{"loc": list(loc), "msg": shortened(msg, MAX_MESSAGE_CHARS), "type": error_type}])


def detail_text(detail: Any) -> str:
    """An HTTP error's detail as one line of text (a validation list: each `field: message`)."""
    if isinstance(detail, list):
        return "; ".join(f"{'.'.join(map(str, error.get('loc', ())))}: {error.get('msg', '')}"
                         for error in detail if isinstance(error, dict))
    return str(detail)


def error_kind(status: int) -> str:
    if status == 401:
        return "authentication_error"
    return "server_error" if status >= 500 else "invalid_request_error"


def error_param(detail: Any) -> str | None:
    """The field of a validation list's first error, without its `body`/`query`/`path` part."""
    if not isinstance(detail, list) or not detail or not isinstance(detail[0], dict):
        return None
    return ".".join(map(str, detail[0].get("loc", [])[1:])) or None


def error_body(status: int, detail: str | list[dict[str, Any]], code: str | None = None,
               **extra: Any) -> dict[str, Any]:
    """An `ErrorBody` as JSON; `extra` (unavailable, query_id, more_errors) only when given."""
    error = {"code": code or CODES.get(status, "error"), "message": detail_text(detail), "type": error_kind(status),
             "param": error_param(detail)}
    return {"error": error, "detail": detail, **{name: value for name, value in extra.items() if value is not None}}


def error_response(status: int, detail: str | list[dict[str, Any]], headers: Mapping[str, str] | None = None,
                   code: str | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse(error_body(status, detail, code, **extra), status_code=status,
                        headers=dict(headers) if headers else None)


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


def install_error_handlers(app: FastAPI) -> None:
    """Every HTTP error, invalid request and refusal of the application rules answered as an
    `ErrorBody` (the outages' 503 and the middleware's errors use `error_response` too)."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        more = len(errors) - MAX_ERRORS if len(errors) > MAX_ERRORS else None
        return error_response(422, error_details(errors), more_errors=more)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> Response:
        if not is_body_allowed_for_status_code(exc.status_code):
            return Response(status_code=exc.status_code, headers=exc.headers)
        return error_response(exc.status_code, exc.detail, exc.headers)

    async def refused(request: Request, exc: Exception) -> Response:
        return await http_error(request, refusal(exc))

    for kind in REFUSALS:
        app.add_exception_handler(kind, refused)


def without_default_422(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without the 422 FastAPI adds to every operation that has a parameter: each
    route declares its own 422 (an `ErrorBody`) when it can answer one; a route whose only
    parameter is an id in its path cannot."""
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            response = operation.get("responses", {}).get("422", {})
            ref = response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
            if ref.endswith("/HTTPValidationError"):
                del operation["responses"]["422"]
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema
