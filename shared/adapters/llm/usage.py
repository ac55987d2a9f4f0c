"""Token usage and cost estimates of one client, per purpose (tree, summaries, scoring, ...)."""

from __future__ import annotations

import threading

from pydantic import BaseModel

# USD per million tokens (input, output), list prices. Matched by the longest model-name
# prefix, so dated variants ("gemini-2.5-flash-001") price like their family. Models absent
# from the table (local Ollama/vLLM models) cost nothing.
PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.0-flash-lite": (0.075, 0.30),
    "gemini-3-pro": (2.00, 12.00),
    "gemini-3-flash": (0.50, 3.00),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
}


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None for an unpriced (e.g. local) model."""
    name = model.lower().removeprefix("models/")
    matches = [prefix for prefix in PRICES_PER_MILLION if name.startswith(prefix)]
    return PRICES_PER_MILLION[max(matches, key=len)] if matches else None


def estimate_cost(model: str, input_tokens: int, output_tokens: int) -> float:
    price = price_for(model)
    if price is None:
        return 0.0
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


class PurposeUsage(BaseModel):
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    malformed: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: PurposeUsage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class LLMUsage:
    """Thread-safe counters; `calls` counts requests that reached the provider (retries too)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._lock = threading.Lock()
        self._by_purpose: dict[str, PurposeUsage] = {}

    def _entry(self, purpose: str) -> PurposeUsage:
        return self._by_purpose.setdefault(purpose, PurposeUsage())

    def record_call(self, purpose: str, input_tokens: int, output_tokens: int) -> None:
        with self._lock:
            entry = self._entry(purpose)
            entry.calls += 1
            entry.input_tokens += input_tokens
            entry.output_tokens += output_tokens
            entry.cost_usd += estimate_cost(self.model, input_tokens, output_tokens)

    def record(self, purpose: str, counter: str) -> None:
        """Bump `cache_hits`, `retries`, `malformed` or `failures` (requests counted separately)."""
        with self._lock:
            entry = self._entry(purpose)
            setattr(entry, counter, getattr(entry, counter) + 1)

    def by_purpose(self) -> dict[str, PurposeUsage]:
        with self._lock:
            return {k: v.model_copy() for k, v in self._by_purpose.items()}

    def total(self) -> PurposeUsage:
        total = PurposeUsage()
        for entry in self.by_purpose().values():
            total.add(entry)
        return total

    @property
    def calls(self) -> int:
        return self.total().calls

    def reset(self) -> None:
        with self._lock:
            self._by_purpose.clear()
