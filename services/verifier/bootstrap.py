"""The verifier's composition root: its handlers from the stage's ports and settings."""

from __future__ import annotations

from services.verifier.handlers import VerifierHandlers
from services.verifier.llm_answer import LLMAnswerGenerator
from services.verifier.models import configured_models
from shared.adapters.cache import AnswerCache
from shared.adapters.llm import make_llm
from shared.stage import StagePorts


async def build(ports: StagePorts) -> VerifierHandlers:
    llm = make_llm(ports.settings)
    # The navigator scores with the same model: the key names it once. An entailment model
    # changes verdicts, so it is named too.
    return VerifierHandlers(
        ports.repository, ports.bus, ports.queries,
        generator=LLMAnswerGenerator(llm) if llm else None,
        cache=AnswerCache(ports.repository),
        models=configured_models(ports.settings),
    )
