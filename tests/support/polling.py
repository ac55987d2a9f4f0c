"""Waiting in tests for something that happens in the background (a relay, a deletion, a restart)."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Whether `condition()` became true within `timeout_s`, checked every 20 ms."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
