"""Verifier service wiring: `python -m services.verifier` or `faststream run services.verifier.main:app`."""

from __future__ import annotations

from services.verifier.handlers import STAGE, VerifierHandlers
from shared.bus.delivery import Delivery, Failure
from shared.bus.runtime import StageRuntime
from shared.cache import AnswerCache
from shared.events import ContextCompressed
from shared.llm import make_llm

runtime = StageRuntime(STAGE)
handlers: VerifierHandlers | None = None


async def wire() -> None:
    global handlers
    from services.verifier.llm_answer import LLMAnswerGenerator

    llm = make_llm(runtime.settings)
    handlers = VerifierHandlers(
        runtime.repo, runtime.bus, runtime.queries,
        generator=LLMAnswerGenerator(llm) if llm else None,
        cache=AnswerCache(runtime.repo),
        llm=llm,
    )


async def on_context_compressed(event: ContextCompressed, delivery: Delivery) -> None:
    assert handlers is not None
    await handlers.on_context_compressed(event, delivery)


async def give_up(failure: Failure) -> None:
    assert handlers is not None
    await handlers.give_up(failure)


runtime.on_startup(wire)
runtime.subscribe(ContextCompressed, on_context_compressed, give_up=give_up)
app = runtime.app
