"""Network-level exception types worth a retry, whichever httpx flavour a library uses."""

from __future__ import annotations

import httpx

_types: list[type[BaseException]] = [httpx.TransportError]
try:  # google-genai prefers httpx2 (a fork under another namespace) when it is installed
    import httpx2

    _types.append(httpx2.TransportError)
except ImportError:  # pragma: no cover - depends on the environment
    pass

NETWORK_ERRORS: tuple[type[BaseException], ...] = tuple(_types)
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds (HTTP dates are ignored)."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return None
