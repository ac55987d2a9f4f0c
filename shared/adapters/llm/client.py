"""The one LLM client interface, and the retry/cache/usage logic both providers share.

Domain code is synchronous and runs in worker threads, so the interface is synchronous;
concurrency across those threads is bounded by a semaphore per client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from shared.adapters.llm.call_cache import CallCache, call_cache_key
from shared.adapters.llm.errors import (
    LLMMalformedOutputError,
    LLMUnavailableError,
    TransientLLMError,
)
from shared.adapters.llm.jsonparse import NoJSONFound, parse_model
from shared.adapters.llm.usage import LLMUsage
from shared.adapters.logs import log_fields
from shared.adapters.metrics import LLM_CALLS, LLM_TOKENS
from shared.app.retry import RetryPolicy

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
# Told the reply so far while a model writes it (a streamed text reply). A retried call starts
# again from its first token: the next text told may then be shorter than the last.
DraftListener = Callable[[str], None]


class LLMClient(Protocol):
    """What the indexer, navigator and verifier call. Implementations: Gemini, OpenAI-compatible."""

    provider: str
    model: str
    usage: LLMUsage
    context_tokens: int | None  # the model's context window; None: a long one

    def generate_json(self, prompt: str, schema: type[T], *, purpose: str) -> T:
        """A reply validated against `schema`; raises an `LLMError` subclass on failure."""
        ...

    def generate_text(self, prompt: str, *, purpose: str, on_text: DraftListener | None = None) -> str:
        """The reply's text; with `on_text`, the reply so far is told as the model writes it
        (streamed where the provider streams, all at once where it does not)."""
        ...


@dataclass(frozen=True)
class ModelRetryPolicy(RetryPolicy):
    """The shared backoff (`shared/app/retry.py`), and how often a reply that does not parse is
    asked for again."""

    malformed_attempts: int = 2


@dataclass(frozen=True)
class RawReply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0


# The most a reply may run to, in tokens, by purpose: a model that keeps writing (a small one
# repeating itself) stops there instead of filling its window and the caller's time.
REPLY_TOKENS = {"answer": 800, "follow_up": 200, "judge": 300, "scoring": 600, "summaries": 4000, "tree": 6000}
DEFAULT_REPLY_TOKENS = 2000
# Of a model's own window (`context_tokens`), a reply may take at most this share.
REPLY_WINDOW_SHARE = 0.25


class BaseLLMClient:
    """Caching, retries, bounded concurrency, usage and metrics around one provider request.

    Subclasses implement `_send`, which performs exactly one HTTP request and raises
    `TransientLLMError` for conditions worth retrying, and may implement `_stream`, the same
    request for a text reply told as it is written.
    """

    provider = "base"

    def __init__(
        self,
        model: str,
        *,
        timeout_s: float = 60.0,
        max_concurrency: int = 4,
        retry: ModelRetryPolicy | None = None,
        cache: CallCache | None = None,
        sleep: Callable[[float], None] = time.sleep,
        context_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.context_tokens = context_tokens
        self.timeout_s = timeout_s
        self.retry = retry or ModelRetryPolicy()
        self.cache = cache if cache is not None else CallCache()
        self.usage = LLMUsage(model)
        self._slots = threading.BoundedSemaphore(max(1, max_concurrency))
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    # -- provider hook ---------------------------------------------------------------------
    def _send(self, prompt: str, schema: type[BaseModel] | None, timeout_s: float, reply_tokens: int) -> RawReply:
        raise NotImplementedError

    def _stream(self, prompt: str, timeout_s: float, reply_tokens: int, on_text: DraftListener) -> RawReply:
        """One request for a text reply, `on_text` told each longer prefix of it as it arrives.
        By default the reply is told whole once it is there."""
        reply = self._send(prompt, None, timeout_s, reply_tokens)
        if reply.text:
            on_text(reply.text)
        return reply

    def reply_tokens(self, purpose: str) -> int:
        """The longest reply a call for `purpose` may get (`REPLY_TOKENS`), within a quarter of
        the model's window when it has a small one."""
        cap = REPLY_TOKENS.get(purpose, DEFAULT_REPLY_TOKENS)
        return min(cap, int(self.context_tokens * REPLY_WINDOW_SHARE)) if self.context_tokens else cap

    # -- public interface ------------------------------------------------------------------
    def generate_json(self, prompt: str, schema: type[T], *, purpose: str) -> T:
        key = call_cache_key(self.provider, self.model, prompt, schema)
        cached = self.cache.get(key)
        if cached is not None:
            try:
                result = parse_model(cached, schema)
            except (NoJSONFound, ValidationError):
                pass  # an entry written by an older schema version: ask again
            else:
                self._count_cache_hit(purpose)
                return result
        problem = ""
        for attempt in range(1, self.retry.malformed_attempts + 1):
            reply = self._send_with_retries(prompt, schema, purpose)
            try:
                result = parse_model(reply.text, schema)
            except (NoJSONFound, ValidationError) as exc:
                problem = _first_line(str(exc))
                self.usage.record(purpose, "malformed")
                LLM_CALLS.labels(purpose=purpose, outcome="malformed").inc()
                logger.warning(
                    "model reply does not match the schema",
                    extra=log_fields(purpose=purpose, model=self.model, attempt=attempt, problem=problem),
                )
                continue
            self.cache.put(key, reply.text)
            return result
        self.usage.record(purpose, "failures")
        raise LLMMalformedOutputError(
            f"{self.provider} model {self.model!r} gave no valid {schema.__name__} JSON for {purpose!r} "
            f"in {self.retry.malformed_attempts} attempts (last problem: {problem}). A larger model or "
            "a provider with structured output support is more reliable."
        )

    def generate_text(self, prompt: str, *, purpose: str, on_text: DraftListener | None = None) -> str:
        key = call_cache_key(self.provider, self.model, prompt, None)
        cached = self.cache.get(key)
        if cached is not None:
            self._count_cache_hit(purpose)
            if on_text is not None:
                on_text(cached)
            return cached
        for attempt in range(1, self.retry.malformed_attempts + 1):
            reply = self._send_with_retries(prompt, None, purpose, on_text)
            if reply.text.strip():
                self.cache.put(key, reply.text)
                return reply.text
            self.usage.record(purpose, "malformed")
            LLM_CALLS.labels(purpose=purpose, outcome="malformed").inc()
            logger.warning("empty model reply", extra=log_fields(purpose=purpose, attempt=attempt))
        self.usage.record(purpose, "failures")
        raise LLMMalformedOutputError(
            f"{self.provider} model {self.model!r} returned empty text for {purpose!r} "
            f"{self.retry.malformed_attempts} times"
        )

    # -- internals -------------------------------------------------------------------------
    def _count_cache_hit(self, purpose: str) -> None:
        self.usage.record(purpose, "cache_hits")
        LLM_CALLS.labels(purpose=purpose, outcome="cached").inc()

    def _send_with_retries(self, prompt: str, schema: type[BaseModel] | None, purpose: str,
                           on_text: DraftListener | None = None) -> RawReply:
        last_error = ""
        for attempt in range(self.retry.max_attempts):
            retry_after: float | None = None
            started = time.perf_counter()
            with self._slots:
                try:
                    if on_text is not None and schema is None:
                        reply = self._stream(prompt, self.timeout_s, self.reply_tokens(purpose), on_text)
                    else:
                        reply = self._send(prompt, schema, self.timeout_s, self.reply_tokens(purpose))
                except TransientLLMError as exc:
                    last_error = str(exc)
                    retry_after = exc.retry_after_s
                    reply = None
            elapsed = time.perf_counter() - started
            if reply is not None:
                self.usage.record_call(purpose, reply.input_tokens, reply.output_tokens)
                LLM_CALLS.labels(purpose=purpose, outcome="ok").inc()
                LLM_TOKENS.labels(direction="input").inc(reply.input_tokens)
                LLM_TOKENS.labels(direction="output").inc(reply.output_tokens)
                logger.info(
                    "model call",
                    extra=log_fields(
                        purpose=purpose, model=self.model, attempt=attempt + 1, seconds=round(elapsed, 3),
                        input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                    ),
                )
                return reply
            self.usage.record_call(purpose, 0, 0)
            self.usage.record(purpose, "retries")
            LLM_CALLS.labels(purpose=purpose, outcome="retried").inc()
            if attempt + 1 < self.retry.max_attempts:
                delay = self.retry.delay(attempt, retry_after)
                logger.warning(
                    "model call failed, retrying",
                    extra=log_fields(purpose=purpose, model=self.model, attempt=attempt + 1,
                                     error=last_error, retry_in_s=round(delay, 3)),
                )
                self._sleep(delay)
        self.usage.record(purpose, "failures")
        LLM_CALLS.labels(purpose=purpose, outcome="failed").inc()
        raise LLMUnavailableError(
            f"{self.provider} model {self.model!r} failed {self.retry.max_attempts} times for {purpose!r} "
            f"(last error: {last_error}). Check that the server is reachable, or raise "
            "TREERAG_LLM_TIMEOUT_S if it is slow."
        )


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:300] if text.strip() else ""
