"""Paged listings: opaque cursors and the headers that carry them.

A listing answers with a JSON array (the page) and, when more follows, the cursor of the next
page in `X-Next-Cursor` and as an RFC 8288 `Link: <...>; rel="next"` URL. A cursor is the
store's position plus the filter it was made under, base64url-encoded: clients pass it back
unchanged, and a cursor reused under another filter is refused rather than silently giving
a page of something else.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated

from fastapi import HTTPException, Query, Request, Response
from pydantic import BaseModel, ValidationError

from shared.model.listing import LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX

NEXT_CURSOR_HEADER = "X-Next-Cursor"
CURSOR_VERSION = 1

Limit = Annotated[int, Query(ge=1, le=LIST_LIMIT_MAX, description="Records per page.")]
Cursor = Annotated[
    str | None,
    Query(max_length=512, description="The next page's cursor, from the previous page's X-Next-Cursor header."),
]
DEFAULT_LIMIT = LIST_LIMIT_DEFAULT


class _CursorBody(BaseModel):
    v: int
    position: int
    filter: str


def encode_cursor(position: int, filter_key: str) -> str:
    body = _CursorBody(v=CURSOR_VERSION, position=position, filter=filter_key).model_dump_json()
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, filter_key: str) -> int | None:
    """The position a cursor continues from (None: the first page). 400 for a cursor that is
    not one of ours or was made under another filter."""
    if cursor is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body = _CursorBody.model_validate(json.loads(raw))
    except (binascii.Error, ValueError, ValidationError, UnicodeDecodeError) as exc:
        raise HTTPException(400, "the cursor is not valid; pass the X-Next-Cursor of the previous page unchanged") \
            from exc
    if body.v != CURSOR_VERSION or body.position < 1:
        raise HTTPException(400, "the cursor is out of date; list again from the first page")
    if body.filter != filter_key:
        raise HTTPException(400, "the cursor was made for another filter; pass the same status as for the first page")
    return body.position


def link_next(request: Request, response: Response, next_cursor: str | None) -> None:
    """Set the headers naming the next page, when there is one."""
    if next_cursor is None:
        return
    response.headers[NEXT_CURSOR_HEADER] = next_cursor
    url = request.url.include_query_params(cursor=next_cursor)
    # Relative: right behind a proxy that serves the API under another host.
    response.headers["Link"] = f'<{url.path}?{url.query}>; rel="next"'
