"""Navigator service wiring: `python -m services.navigator` or `faststream run services.navigator.main:app`."""

from __future__ import annotations

from services.navigator.handlers import STAGE, NavigatorHandlers
from services.verifier.cache_key import generator_name
from shared.bus.delivery import Delivery
from shared.bus.runtime import StageRuntime
from shared.cache import AnswerCache
from shared.embeddings import make_embedder
from shared.events import QueryReceived
from shared.llm import make_llm
from treerag.pipeline import QueryEngine

runtime = StageRuntime(STAGE)
handlers: NavigatorHandlers | None = None


async def wire() -> None:
    global handlers
    from services.navigator.llm_scoring import LLMNodeScorer

    llm = make_llm(runtime.settings)
    handlers = NavigatorHandlers(
        QueryEngine(runtime.repo, embedder=make_embedder(runtime.settings)), runtime.bus, runtime.queries,
        scorer=LLMNodeScorer(llm) if llm else None,
        cache=AnswerCache(runtime.repo),
        generator=generator_name(llm),
    )


async def on_query_received(event: QueryReceived, delivery: Delivery) -> None:
    assert handlers is not None
    await handlers.on_query_received(event, delivery)


async def give_up(event: QueryReceived, error_type: str, reason: str) -> None:
    assert handlers is not None
    await handlers.give_up(event, error_type, reason)


runtime.on_startup(wire)
runtime.subscribe(QueryReceived, on_query_received, give_up=give_up)
app = runtime.app
