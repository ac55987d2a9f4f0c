"""Small interfaces the query stages accept for optional model-backed behaviour.

Offline, none is given and the stages use their lexical implementations. The LLM adapters in
`shared.adapters.llm` provide real implementations; the embedding adapters in `shared.adapters.embeddings`
provide `Embedder`s; `shared.adapters.reranker` a `PassageScorer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from shared.model.query import Passage, SourceNote


class NodeScorer(Protocol):
    """Scores one level's candidate nodes in one call."""

    def score(self, question: str, candidates: list[tuple[str, str]]) -> list[float] | None:
        """Relevance in 0..1 per (title, summary) candidate, or None when scoring failed
        (the caller then falls back to lexical scores and counts the fallback)."""
        ...


class AnswerGenerator(Protocol):
    """Writes an answer from the given passages only, citing them as `[doc, p. N]`."""

    name: str  # e.g. "llm:gemini-2.5-flash"

    def generate(self, question: str, passages: list[Passage], notes: list[SourceNote] | None = None,
                 on_text: Callable[[str], None] | None = None) -> str:
        """The answer text; `notes`, one per passage, say what the reader is told beside it.
        With `on_text`, the answer so far is told as it is written (a retried call starts again,
        so a later text may be shorter than the one before)."""
        ...


class EntailmentJudge(Protocol):
    """A natural-language-inference model: does the premise entail the hypothesis?"""

    name: str

    def judge(self, premise: str, hypothesis: str) -> dict[str, float]:
        """Probabilities of "entailment", "neutral" and "contradiction" (summing to 1)."""
        ...


class PassageScorer(Protocol):
    """A cross-encoder: reads the question and each passage together and scores how well the
    passage answers it (a logit: higher is more relevant, comparable across passages)."""

    name: str  # model identity; a fitted reranking weight belongs to one name

    def score(self, question: str, passages: Sequence[str]) -> list[float]: ...


class Embedder(Protocol):
    """Maps texts to dense vectors: one row per text, L2-normalised float32, so that a dot
    product is the cosine similarity. The same text always gets the same vector."""

    name: str  # model identity, e.g. "wordllama:l2_supercat_256"; vectors of two names never mix
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Shape (len(texts), dimension), dtype float32; an empty text gets the zero vector."""
        ...


class FollowUpWriter(Protocol):
    """Rewrites the last question of a conversation into one that stands alone."""

    name: str

    def standalone(self, question: str, previous: list[str]) -> str | None:
        """The question completed from the `previous` questions (oldest first), or None when the
        model gave nothing usable (the rules then complete it)."""
        ...
