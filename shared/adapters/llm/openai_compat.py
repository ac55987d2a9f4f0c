"""Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, LM Studio) via httpx."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx
from pydantic import BaseModel

from shared.adapters.llm.client import BaseLLMClient, DraftListener, RawReply
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

    def _body(self, prompt: str, schema: type[BaseModel] | None, reply_tokens: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": _with_schema_hint(prompt, schema)}],
            "temperature": self.temperature,
            "max_tokens": reply_tokens,
        }
        response_format = self._response_format(schema) if schema is not None else None
        if response_format is not None:
            body["response_format"] = response_format
        return body

    def _send(self, prompt: str, schema: type[BaseModel] | None, timeout_s: float, reply_tokens: int) -> RawReply:
        while True:
            body = self._body(prompt, schema, reply_tokens)
            try:
                response = self._http.post("/chat/completions", json=body, timeout=timeout_s)
            except NETWORK_ERRORS as exc:
                raise TransientLLMError(f"{type(exc).__name__}: {exc or 'no detail'}") from exc
            # A server that cannot take the format says so with 400, 422 or even 500 (llama.cpp's
            # server answers 500 to json_schema): that is no outage, so step down before retrying.
            if response.status_code >= 400 and "response_format" in body and self._step_down_format(response):
                continue
            self._raise_for_status(response)
            return _parse_completion(response)

    def _stream(self, prompt: str, timeout_s: float, reply_tokens: int, on_text: DraftListener) -> RawReply:
        body = {**self._body(prompt, None, reply_tokens), "stream": True}
        parts: list[str] = []
        usage: dict[str, Any] = {}
        chunks = 0
        try:
            with self._http.stream("POST", "/chat/completions", json=body, timeout=timeout_s) as response:
                if response.status_code >= 400:
                    response.read()
                    self._raise_for_status(response)
                ended = False
                for data in _event_data(response.iter_lines()):
                    if data == _DONE:
                        ended = True
                        break
                    delta, reported, finish = _parse_chunk(data)
                    usage = reported or usage
                    ended = ended or bool(finish)
                    if delta:
                        chunks += 1
                        parts.append(delta)
                        on_text("".join(parts))
        except NETWORK_ERRORS as exc:
            raise TransientLLMError(f"{type(exc).__name__} while the reply streamed: {exc or 'no detail'}") from exc
        if not ended:
            # A connection closed mid-reply: what came is not the whole answer.
            raise TransientLLMError(f"the stream ended after {chunks} chunks, before the reply did")
        # A server that reports no usage on a stream sends about one token a chunk.
        return RawReply(text="".join(parts), input_tokens=int(usage.get("prompt_tokens") or 0),
                        output_tokens=int(usage.get("completion_tokens") or chunks))

    def _raise_for_status(self, response: httpx.Response) -> None:
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


_DONE = "[DONE]"


def _event_data(lines: Iterator[str]) -> Iterator[str]:
    """The data of each server-sent event of a streamed completion (`[DONE]` last)."""
    for line in lines:
        if line.startswith("data:"):  # blank separators, comments and event names carry no text
            yield line[5:].strip()


def _parse_chunk(data: str) -> tuple[str, dict[str, Any], str]:
    """The text a streamed chunk adds, the usage it reports (the last chunk, on servers that
    report it) and its finish reason ("" until the last)."""
    try:
        chunk = json.loads(data)
    except ValueError as exc:
        raise TransientLLMError(f"a streamed chunk is not JSON: {data[:200]!r}") from exc
    if not isinstance(chunk, dict):
        raise TransientLLMError(f"a streamed chunk is not a JSON object: {data[:200]!r}")
    choices = chunk.get("choices") or []
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    delta = choice.get("delta") or {}
    text = delta.get("content") if isinstance(delta, dict) else None
    usage = chunk.get("usage")
    return (text if isinstance(text, str) else ""), (usage if isinstance(usage, dict) else {}), \
        str(choice.get("finish_reason") or "")


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
