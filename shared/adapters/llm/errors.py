"""Exceptions of the LLM path. Callers catch `LLMError` to fall back to the offline path."""

from __future__ import annotations


class LLMError(Exception):
    """Any failure of a model call; the offline path can take over."""


class LLMConfigError(LLMError):
    """The provider settings are incomplete or contradictory."""


class LLMUnavailableError(LLMError):
    """The provider kept failing (429, 5xx, timeouts, connection errors) after every retry."""


class LLMRequestError(LLMError):
    """The provider refused the request (4xx other than 429): key, model name or request shape."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class LLMMalformedOutputError(LLMError):
    """The model's reply was not valid JSON for the requested schema, after bounded retries."""


class TransientLLMError(LLMError):
    """One attempt failed in a way worth retrying. Raised by transports, handled by the client."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
