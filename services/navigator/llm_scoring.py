"""Node scoring by a language model: one call scores all candidates of one tree level."""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field

from shared.adapters.llm.client import LLMClient
from shared.adapters.llm.errors import LLMError
from shared.adapters.logs import log_fields

logger = logging.getLogger(__name__)

PROMPT_VERSION = "score-v1"


class CandidateScore(BaseModel):
    index: int = Field(description="The candidate's number in the list.")
    score: float = Field(description="0 = irrelevant, 1 = certainly holds the answer.")


class CandidateScores(BaseModel):
    scores: list[CandidateScore]


def _prompt(question: str, candidates: list[tuple[str, str]], summary_chars: int) -> str:
    listed = "\n".join(
        f"{i}. {title.strip()}" + (f" — {' '.join(summary.split())[:summary_chars]}" if summary.strip() else "")
        for i, (title, summary) in enumerate(candidates)
    )
    return (
        "You are navigating a document's table of contents to answer a question. Rate how likely "
        "each section below is to contain the information needed, from 0 (irrelevant) to 1 (certainly "
        "contains it). Judge by the title and summary; a broad section that probably contains the "
        "answer in a subsection also scores high.\n\n"
        f"Question: {question.strip()}\n\nSections:\n{listed}\n\n"
        'Answer as JSON: {"scores": [{"index": 0, "score": 0.0}, ...]} with one entry per section.'
    )


class LLMNodeScorer:
    """`shared.ports.model_roles.NodeScorer` backed by a model. Returns None on any failure, so the
    navigator falls back to lexical scores (and counts the fallback)."""

    def __init__(self, llm: LLMClient, *, summary_chars: int = 300, max_candidates: int = 60) -> None:
        self.llm = llm
        self.summary_chars = summary_chars
        # Levels wider than this (flat trees of hundreds of nodes) stay lexical: one prompt
        # listing them all costs more than it helps.
        self.max_candidates = max_candidates
        self.name = f"llm:{llm.model}"

    def score(self, question: str, candidates: list[tuple[str, str]]) -> list[float] | None:
        if not candidates:
            return []
        if len(candidates) > self.max_candidates:
            return None
        try:
            reply = self.llm.generate_json(
                _prompt(question, candidates, self.summary_chars), CandidateScores, purpose="scoring"
            )
        except LLMError as exc:
            logger.warning("model scoring failed", extra=log_fields(error=str(exc)[:300]))
            return None
        by_index: dict[int, float] = {}
        for item in reply.scores:
            if 0 <= item.index < len(candidates):
                by_index[item.index] = min(1.0, max(0.0, float(item.score)))
        if len(by_index) != len(candidates):
            logger.warning(
                "model scored only some candidates",
                extra=log_fields(scored=len(by_index), candidates=len(candidates)),
            )
            return None
        return [by_index[i] for i in range(len(candidates))]
