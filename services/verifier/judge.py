"""LLM-as-judge: faithfulness, relevance and completeness of an answer, each 0..1."""

from __future__ import annotations

from pydantic import BaseModel, Field

from shared.adapters.llm.client import LLMClient
from shared.model.query import Passage
from shared.ports.model_calls import made_from

PROMPT_VERSION = "judge-v1"


class JudgeScores(BaseModel):
    faithfulness: float = Field(description="Share of the answer's claims supported by the sources (0..1).")
    relevance: float = Field(description="How directly the answer addresses the question (0..1).")
    completeness: float = Field(description="How much of what the question asks the answer covers (0..1).")
    rationale: str = Field(description="One or two sentences explaining the scores.")

    def clamped(self) -> JudgeScores:
        return JudgeScores(
            faithfulness=min(1.0, max(0.0, self.faithfulness)),
            relevance=min(1.0, max(0.0, self.relevance)),
            completeness=min(1.0, max(0.0, self.completeness)),
            rationale=self.rationale.strip(),
        )


def judge_prompt(question: str, answer: str, passages: list[Passage], reference: str | None = None) -> str:
    sources = "\n\n".join(
        f"[{p.file_name or p.doc_id}, pages {', '.join(map(str, p.pages))}]\n{p.text.strip()[:4000]}" for p in passages
    )
    gold = f"\nReference answer (for completeness only): {reference.strip()}\n" if reference else ""
    return (
        "You grade an answer produced by a document question-answering system. Score each criterion "
        "from 0 to 1:\n"
        "- faithfulness: the share of the answer's claims that the sources support (an answer that "
        "says the information is not in the documents is faithful when the sources indeed lack it);\n"
        "- relevance: how directly the answer addresses the question;\n"
        "- completeness: how much of what the question asks is answered.\n\n"
        f"Question: {question.strip()}\n{gold}\nAnswer: {answer.strip()}\n\nSources:\n{sources or '(none)'}\n\n"
        'Answer as JSON: {"faithfulness": 0.0, "relevance": 0.0, "completeness": 0.0, "rationale": "..."}'
    )


def judge_answer(
    llm: LLMClient, question: str, answer: str, passages: list[Passage], reference: str | None = None
) -> JudgeScores:
    """Scores in 0..1; raises `shared.adapters.llm.LLMError` when the model fails."""
    with made_from(p.doc_id for p in passages):
        scores = llm.generate_json(judge_prompt(question, answer, passages, reference), JudgeScores, purpose="judge")
    return scores.clamped()
