"""LLM clients behind one interface (Gemini, OpenAI-compatible); offline when none is configured.

`make_llm(settings)` returns a client or None; domain code depends only on `LLMClient` and
catches `LLMError` to fall back to the offline path.
"""

from shared.adapters.llm.call_cache import (
    CallCache,
    DirectoryCallStore,
    RepositoryCallStore,
)
from shared.adapters.llm.client import BaseLLMClient, LLMClient, ModelRetryPolicy
from shared.adapters.llm.errors import (
    LLMConfigError,
    LLMError,
    LLMMalformedOutputError,
    LLMRequestError,
    LLMUnavailableError,
)
from shared.adapters.llm.factory import make_llm
from shared.adapters.llm.usage import LLMUsage, PurposeUsage, estimate_cost

__all__ = [
    "BaseLLMClient",
    "CallCache",
    "DirectoryCallStore",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMMalformedOutputError",
    "LLMRequestError",
    "LLMUnavailableError",
    "LLMUsage",
    "PurposeUsage",
    "RepositoryCallStore",
    "ModelRetryPolicy",
    "estimate_cost",
    "make_llm",
]
