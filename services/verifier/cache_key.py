"""The answer-cache key of a query in the services: the same key in the navigator, which looks
answers up, and in the verifier, which stores them."""

from __future__ import annotations

from shared.cache import answer_cache_key
from shared.llm.language import detect_language
from shared.query import QuerySettings

EXTRACTIVE = "extractive"


def generator_name(llm: object | None) -> str:
    """How the verifier's answers are made: 'extractive' offline, else 'llm:<model>'."""
    model = getattr(llm, "model", None)
    return f"llm:{model}" if llm is not None and model else EXTRACTIVE


def query_answer_key(
    question: str, documents: list[tuple[str, int]], settings: QuerySettings, generator: str
) -> str:
    from services.verifier.llm_answer import PROMPT_VERSION

    return answer_cache_key(
        question,
        documents,
        settings,
        model=generator,
        language=detect_language(question),
        prompt_version=PROMPT_VERSION if generator != EXTRACTIVE else EXTRACTIVE,
    )
