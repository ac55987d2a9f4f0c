"""Request budgets: a token bucket per API key (and, for failed sign-ins, per client address),
in the gateway process.

Each key may make `burst` requests at once and `rate_per_s` per second on average. The budget is
per gateway replica (N replicas admit up to N times the rate): it protects the pipeline from one
noisy client, it is not a billing quota.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

# Buckets of idle keys are dropped past this many (a full bucket is the same as no bucket).
MAX_TRACKED_KEYS = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    def __init__(self, rate_per_s: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate_per_s > 0 and burst >= 1 (or no limiter at all)")
        self.rate = rate_per_s
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def wait(self, key: str) -> float:
        """Seconds until `key` may spend one request (0: now); nothing is spent."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return 0.0
        tokens = min(float(self.burst), bucket.tokens + (self.clock() - bucket.at) * self.rate)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def take(self, key: str) -> float:
        """Spend one request of `key`'s budget: 0 when it is admitted, else the seconds until
        it would be (nothing is spent then)."""
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_TRACKED_KEYS:
                self._drop_full(now)
            bucket = self._buckets[key] = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _drop_full(self, now: float) -> None:
        for key in [k for k, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst]:
            del self._buckets[key]


def retry_after_header(wait_s: float) -> str:
    """Retry-After takes whole seconds: rounded up, so a client that waits that long is admitted."""
    return str(max(1, math.ceil(wait_s)))
