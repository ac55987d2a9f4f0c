"""Listing cursors: opaque, bound to the filter they were made under, refused when forged."""

from __future__ import annotations

import pytest
from fastapi import HTTPException

from services.gateway.pagination import decode_cursor, encode_cursor


def test_a_cursor_gives_back_its_position_under_the_same_filter() -> None:
    cursor = encode_cursor(4321, "failed")
    assert "4321" not in cursor and "=" not in cursor  # opaque, and safe in a query string
    assert decode_cursor(cursor, "failed") == 4321
    assert decode_cursor(None, "") is None


@pytest.mark.parametrize("cursor", ["not base64 at all!", "e30", encode_cursor(7, "")[:-3]])
def test_a_forged_or_damaged_cursor_is_a_400_that_says_what_to_do(cursor: str) -> None:
    with pytest.raises(HTTPException) as refused:
        decode_cursor(cursor, "")
    assert refused.value.status_code == 400 and "cursor" in str(refused.value.detail)


def test_a_cursor_made_for_another_status_is_refused() -> None:
    with pytest.raises(HTTPException) as refused:
        decode_cursor(encode_cursor(9, "ready"), "")
    assert refused.value.status_code == 400 and "another filter" in str(refused.value.detail)
