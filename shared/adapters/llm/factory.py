"""Choosing the LLM client from settings: offline unless a provider is configured."""

from __future__ import annotations

import os
from typing import Any

from shared.adapters.llm.call_cache import CallCache, CallStore
from shared.adapters.llm.client import BaseLLMClient, ModelRetryPolicy
from shared.adapters.llm.errors import LLMConfigError
from shared.extras import MissingExtraError, missing_extra
from shared.settings import Settings


def make_llm(
    settings: Settings,
    *,
    call_store: CallStore | None = None,
    retry: ModelRetryPolicy | None = None,
) -> BaseLLMClient | None:
    """The configured client, or None for the offline path (TREERAG_LLM=off, the default).

    TREERAG_LLM=gemini needs GOOGLE_API_KEY (or TREERAG_LLM_API_KEY); TREERAG_LLM=openai needs
    TREERAG_LLM_MODEL. TREERAG_LLM_BASE_URL points either client at another server.
    `call_store` makes the reply cache persistent (a folder, or the repository).
    """
    if settings.llm == "off":
        return None
    common: dict[str, Any] = {
        "timeout_s": settings.llm_timeout_s,
        "max_concurrency": settings.llm_max_concurrency,
        "retry": retry,
        "cache": CallCache(store=call_store),
        "context_tokens": settings.llm_context_tokens,
    }
    if settings.llm == "gemini":
        try:
            from shared.adapters.llm.gemini import DEFAULT_MODEL, GeminiClient
        except ModuleNotFoundError as exc:
            if missing_extra(exc) != "gemini":
                raise
            raise LLMConfigError(str(MissingExtraError("TREERAG_LLM=gemini", "gemini"))) from exc

        api_key = os.environ.get("GOOGLE_API_KEY") or settings.llm_api_key
        if not api_key:
            raise LLMConfigError(
                "TREERAG_LLM=gemini needs an API key: set GOOGLE_API_KEY (from Google AI Studio), "
                "or TREERAG_LLM=off for the offline path."
            )
        return GeminiClient(
            api_key, settings.llm_model or DEFAULT_MODEL, base_url=settings.llm_base_url, **common
        )
    if settings.llm == "openai":
        from shared.adapters.llm.openai_compat import (
            DEFAULT_BASE_URL,
            OpenAICompatibleClient,
        )

        if not settings.llm_model:
            raise LLMConfigError(
                "TREERAG_LLM=openai needs TREERAG_LLM_MODEL (e.g. llama3.1 for Ollama) and usually "
                "TREERAG_LLM_BASE_URL (e.g. http://localhost:11434/v1)."
            )
        return OpenAICompatibleClient(
            settings.llm_model,
            base_url=settings.llm_base_url or DEFAULT_BASE_URL,
            api_key=settings.llm_api_key,
            **common,
        )
    raise LLMConfigError(f"unknown TREERAG_LLM={settings.llm!r}: use gemini, openai or off")
