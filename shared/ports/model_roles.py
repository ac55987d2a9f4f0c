"""Small interfaces the query stages accept for optional model-backed behaviour.

Offline, none is given and the stages use their lexical implementations. The LLM adapters in
`shared.adapters.llm` provide real implementations.
"""

from __future__ import annotations

from typing import Protocol

from shared.model.query import Passage


class NodeScorer(Protocol):
    """Scores one level's candidate nodes in one call."""

    def score(self, question: str, candidates: list[tuple[str, str]]) -> list[float] | None:
        """Relevance in 0..1 per (title, summary) candidate, or None when scoring failed
        (the caller then falls back to lexical scores and counts the fallback)."""
        ...


class AnswerGenerator(Protocol):
    """Writes an answer from the given passages only, citing them as `[doc, p. N]`."""

    name: str  # e.g. "llm:gemini-2.5-flash"

    def generate(self, question: str, passages: list[Passage]) -> str: ...


class EntailmentJudge(Protocol):
    """A natural-language-inference model: does the premise entail the hypothesis?"""

    name: str

    def judge(self, premise: str, hypothesis: str) -> dict[str, float]:
        """Probabilities of "entailment", "neutral" and "contradiction" (summing to 1)."""
        ...
