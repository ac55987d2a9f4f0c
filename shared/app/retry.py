"""How a client of an HTTP service (the gateway, a model server) retries what a retry can fix:
exponential backoff with equal jitter (a random wait between half the ceiling and the ceiling:
never near zero, and spread so that many clients do not retry in step), and the
server's `Retry-After` honoured up to the cap. One rule for every client of the project."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# The answers a retry can fix: too many requests, the server failing or not ready, a timeout.
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (0 for the first): the server's
        `retry_after_s` when it gave one, else a random wait from half a ceiling that doubles up to it."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * (2**attempt))
        return random.uniform(ceiling / 2, ceiling)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds, or an HTTP date; None when the
    header is absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
