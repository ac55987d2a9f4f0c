"""Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, LM Studio) via httpx."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import httpx
from pydantic import BaseModel

from shared.adapters.llm.client import BaseLLMClient, RawReply
from shared.adapters.llm.errors import LLMRequestError, TransientLLMError
from shared.adapters.llm.transport_errors import (
    NETWORK_ERRORS,
    RETRYABLE_STATUS,
    parse_retry_after,
)
from shared.adapters.logs import log_fields

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"

# Structured output support differs between servers: LM Studio only takes json_schema, older
# Ollama only json_object, llama.cpp's server json_object with the schema beside it (which it
# turns into a grammar, so even a small model's reply has the schema's shape). The client starts
# strict and steps down when a server rejects a form.
_FORMAT_LADDER = ("json_schema", "json_object_schema", "json_object", "none")


class OpenAICompatibleClient(BaseLLMClient):
    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        temperature: float = 0.0,
        **options: Any,
    ) -> None:
        super().__init__(model, **options)
        self.base_url = base_url.rstrip("/")
        self.temperature = temperature
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout_s)
        self._format_level = 0
        self._format_lock = threading.Lock()

    def close(self) -> None:
        self._http.close()

    def _response_format(self, schema: type[BaseModel]) -> dict[str, Any] | None:
        kind = _FORMAT_LADDER[self._format_level]
        if kind == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
            }
        if kind == "json_object_schema":
            return {"type": "json_object", "schema": schema.model_json_schema()}
        if kind == "json_object":
            return {"type": "json_object"}
        return None

    def _send(self, prompt: str, schema: type[BaseModel] | None, timeout_s: float, reply_tokens: int) -> RawReply:
        while True:
            body: dict[str, Any] = {
                "model": self.model,
                "messages": [{"role": "user", "content": _with_schema_hint(prompt, schema)}],
                "temperature": self.temperature,
                "max_tokens": reply_tokens,
            }
            response_format = self._response_format(schema) if schema is not None else None
            if response_format is not None:
                body["response_format"] = response_format
            try:
                response = self._http.post("/chat/completions", json=body, timeout=timeout_s)
            except NETWORK_ERRORS as exc:
                raise TransientLLMError(f"{type(exc).__name__}: {exc or 'no detail'}") from exc
            # A server that cannot take the format says so with 400, 422 or even 500 (llama.cpp's
            # server answers 500 to json_schema): that is no outage, so step down before retrying.
            if response.status_code >= 400 and response_format is not None and self._step_down_format(response):
                continue
            if response.status_code in RETRYABLE_STATUS:
                raise TransientLLMError(
                    f"HTTP {response.status_code}: {response.text[:200]}",
                    retry_after_s=parse_retry_after(response.headers.get("retry-after")),
                )
            if response.status_code >= 400:
                raise LLMRequestError(
                    f"{self.base_url} refused the request with HTTP {response.status_code}: "
                    f"{response.text[:300]}. Check TREERAG_LLM_MODEL and TREERAG_LLM_API_KEY.",
                    status=response.status_code,
                )
            return _parse_completion(response)

    def _step_down_format(self, response: httpx.Response) -> bool:
        body = response.text.lower()
        if not any(word in body for word in ("response_format", "json_schema", "json_object", "structured")):
            return False
        with self._format_lock:
            if self._format_level + 1 >= len(_FORMAT_LADDER):
                return False
            self._format_level += 1
        logger.warning(
            "server rejected the structured output format, stepping down",
            extra=log_fields(base_url=self.base_url, now=_FORMAT_LADDER[self._format_level]),
        )
        return True


def _with_schema_hint(prompt: str, schema: type[BaseModel] | None) -> str:
    # Servers that ignore response_format still see the expected shape.
    if schema is None:
        return prompt
    return (
        f"{prompt}\n\nReply with one JSON object only, no prose, matching this JSON schema:\n"
        f"{json.dumps(schema.model_json_schema(), ensure_ascii=False)}"
    )


def _parse_completion(response: httpx.Response) -> RawReply:
    try:
        payload = response.json()
    except ValueError as exc:
        raise TransientLLMError(f"non-JSON HTTP body from the server: {response.text[:200]!r}") from exc
    choices = payload.get("choices") or []
    message = (choices[0].get("message") or {}) if choices else {}
    text = message.get("content") or ""
    usage = payload.get("usage") or {}
    return RawReply(
        text=text if isinstance(text, str) else json.dumps(text),
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
    )
