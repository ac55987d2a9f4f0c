"""Network-level exception types worth a retry, whichever httpx flavour a library uses."""

from __future__ import annotations

import httpx

from shared.app.retry import RETRYABLE_STATUS, parse_retry_after

__all__ = ["NETWORK_ERRORS", "RETRYABLE_STATUS", "parse_retry_after"]

_types: list[type[BaseException]] = [httpx.TransportError]
try:  # google-genai prefers httpx2 (a fork under another namespace) when it is installed
    import httpx2

    _types.append(httpx2.TransportError)
except ImportError:  # pragma: no cover - depends on the environment
    pass

NETWORK_ERRORS: tuple[type[BaseException], ...] = tuple(_types)
