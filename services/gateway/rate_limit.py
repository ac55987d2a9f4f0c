"""Request budgets: a token bucket per API key, and per client address for the requests whose key
may cost a store read (auth.py), in the gateway process.

Each key may make `burst` requests at once and `rate_per_s` per second on average. The budget is
per gateway replica (N replicas admit up to N times the rate): it protects the pipeline from one
noisy client, it is not a billing quota.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from shared.model.lru import Lru

# Buckets kept, the one touched longest ago dropped first: memory stays flat however many keys or
# addresses come, and a dropped bucket had long refilled (a full bucket is the same as none).
MAX_TRACKED_KEYS = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    def __init__(self, rate_per_s: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 max_tracked: int = MAX_TRACKED_KEYS) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate_per_s > 0 and burst >= 1 (or no limiter at all)")
        self.rate = rate_per_s
        self.burst = burst
        self.clock = clock
        self._buckets: Lru[str, _Bucket] = Lru(max_tracked)

    def _tokens(self, bucket: _Bucket, now: float) -> float:
        return min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)

    def wait(self, key: str) -> float:
        """Seconds until `key` may spend one request (0: now); nothing is spent."""
        bucket = self._buckets.peek(key)
        if bucket is None:
            return 0.0
        tokens = self._tokens(bucket, self.clock())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def take(self, key: str) -> float:
        """Spend one request of `key`'s budget: 0 when it is admitted, else the seconds until
        it would be (nothing is spent then)."""
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
            self._buckets.put(key, bucket)
        bucket.tokens = self._tokens(bucket, now)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def give_back(self, key: str) -> None:
        """Return one request taken from `key`'s budget (it turned out not to count)."""
        bucket = self._buckets.peek(key)
        if bucket is not None:
            bucket.tokens = min(float(self.burst), bucket.tokens + 1.0)

    def __len__(self) -> int:
        return len(self._buckets)


def retry_after_header(wait_s: float) -> str:
    """Retry-After takes whole seconds: rounded up, so a client that waits that long is admitted."""
    return str(max(1, math.ceil(wait_s)))
