"""The navigator's composition root: its handlers from the stage's ports and settings."""

from __future__ import annotations

from services.navigator.handlers import NavigatorHandlers
from services.navigator.index_cache import IndexCache
from services.navigator.llm_scoring import LLMNodeScorer
from services.navigator.models import configured_models
from services.navigator.settings import NavigatorSettings
from shared.adapters.cache import AnswerCache
from shared.adapters.llm import make_llm
from shared.adapters.nli import answer_key_suffix
from shared.app.answer_key import answering_name, generator_name
from shared.stage import StagePorts


async def build(ports: StagePorts) -> NavigatorHandlers:
    settings = NavigatorSettings()
    llm = make_llm(ports.settings)
    scorer = LLMNodeScorer(llm) if llm else None
    models = configured_models(ports.settings)
    return NavigatorHandlers(
        IndexCache(ports.repository, models.embedder, settings.index_cache_pages, pages_on_use=True), ports.bus, ports.queries,
        models=models,
        scorer=scorer,
        cache=AnswerCache(ports.repository),
        answered_by=answering_name(generator_name(llm), scorer) + answer_key_suffix(ports.settings.nli),
        warm=settings.warm,
    )
