"""Gemini through the google-genai SDK, with structured output and a pinned API version."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import BaseModel

from shared.adapters.llm.client import BaseLLMClient, DraftListener, RawReply
from shared.adapters.llm.errors import LLMRequestError, TransientLLMError
from shared.adapters.llm.transport_errors import (
    NETWORK_ERRORS,
    RETRYABLE_STATUS,
    parse_retry_after,
)

# google-genai 3.x defaults to "v1"; structured output with response_schema is served on v1beta.
API_VERSION = "v1beta"
DEFAULT_MODEL = "gemini-2.5-flash"


class GeminiClient(BaseLLMClient):
    provider = "gemini"

    def __init__(
        self,
        api_key: str,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        temperature: float = 0.0,
        **options: Any,
    ) -> None:
        super().__init__(model, **options)
        self.temperature = temperature
        http_options = types.HttpOptions(
            base_url=base_url,
            api_version=API_VERSION,
            timeout=int(self.timeout_s * 1000),  # milliseconds
        )
        self._client = genai.Client(api_key=api_key, http_options=http_options)

    def _config(self, schema: type[BaseModel] | None) -> types.GenerateContentConfig:
        # No output cap: Gemini counts its thinking against `max_output_tokens`, and a cap sized
        # for the reply would starve the thinking and return nothing.
        config = types.GenerateContentConfig(temperature=self.temperature)
        if schema is not None:
            config.response_mime_type = "application/json"
            config.response_schema = schema
        return config

    def _send(self, prompt: str, schema: type[BaseModel] | None, timeout_s: float, reply_tokens: int) -> RawReply:
        with _provider_errors():
            response = self._client.models.generate_content(model=self.model, contents=prompt,
                                                            config=self._config(schema))
        return RawReply(_reply_text(response), *_token_counts(response))

    def _stream(self, prompt: str, timeout_s: float, reply_tokens: int, on_text: DraftListener) -> RawReply:
        text = ""
        counts = (0, 0)
        ended = False
        with _provider_errors():
            for chunk in self._client.models.generate_content_stream(model=self.model, contents=prompt,
                                                                     config=self._config(None)):
                counts = _token_counts(chunk) if chunk.usage_metadata else counts
                ended = ended or bool(chunk.candidates and chunk.candidates[0].finish_reason)
                piece = _reply_text(chunk)
                if piece:
                    text += piece
                    on_text(text)
        if not ended:
            # A connection closed mid-reply: what came is not the whole answer.
            raise TransientLLMError("the stream ended before the reply did")
        return RawReply(text, *counts)


@contextmanager
def _provider_errors() -> Iterator[None]:
    """Gemini's and the network's errors as the client's: retried when worth retrying."""
    try:
        yield
    except genai_errors.APIError as exc:
        if exc.code in RETRYABLE_STATUS:
            headers = getattr(getattr(exc, "response", None), "headers", None) or {}
            raise TransientLLMError(
                f"HTTP {exc.code} {exc.status or ''}: {exc.message or ''}".strip(),
                retry_after_s=parse_retry_after(headers.get("retry-after")),
            ) from exc
        raise LLMRequestError(
            f"Gemini refused the request with HTTP {exc.code} {exc.status or ''}: {exc.message}. "
            "Check GOOGLE_API_KEY and TREERAG_LLM_MODEL.",
            status=exc.code,
        ) from exc
    except NETWORK_ERRORS as exc:
        raise TransientLLMError(f"{type(exc).__name__}: {exc or 'no detail'}") from exc


def _token_counts(response: types.GenerateContentResponse) -> tuple[int, int]:
    usage = response.usage_metadata
    if not usage:
        return 0, 0
    return usage.prompt_token_count or 0, (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)


def _reply_text(response: types.GenerateContentResponse) -> str:
    """Concatenated text parts of the first candidate ("" when blocked or empty)."""
    if not response.candidates:
        return ""
    content = response.candidates[0].content
    if content is None or not content.parts:
        return ""
    return "".join(part.text for part in content.parts if part.text and not part.thought)
