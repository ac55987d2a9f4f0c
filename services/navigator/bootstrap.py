"""The navigator's composition root: its handlers from the stage's ports and settings."""

from __future__ import annotations

from services.navigator.handlers import NavigatorHandlers
from services.navigator.index_cache import IndexCache
from services.navigator.llm_scoring import LLMNodeScorer
from shared.adapters.cache import AnswerCache
from shared.adapters.llm import make_llm
from shared.app.answer_key import generator_name
from shared.stage import StagePorts


async def build(ports: StagePorts) -> NavigatorHandlers:
    llm = make_llm(ports.settings)
    return NavigatorHandlers(
        IndexCache(ports.repository), ports.bus, ports.queries,
        scorer=LLMNodeScorer(llm) if llm else None,
        cache=AnswerCache(ports.repository),
        generator=generator_name(llm),
    )
