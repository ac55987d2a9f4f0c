"""The one query path of a process: the navigator, compressor and verifier stages' own handlers,
declared by their own routes, over an in-memory bus.

The services run the same handlers on Kafka and MongoDB. `treerag ask` (through
`treerag.engine.QueryEngine`) and the evaluation harness both answer through `QueryPath`, with
the models `QueryModels.configured` loads as the stages' bootstraps do, so a figure the harness
reports is a figure of the product. Cross-validation hands in a fold's refitted ranking models;
nothing else differs. The BM25 baselines hand their passages to the same verifier handler
(`QueryPath.verify`), so every system's answer is checked alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from services.compressor.handlers import STAGE as COMPRESSOR
from services.compressor.handlers import CompressorHandlers
from services.compressor.main import routes as compressor_routes
from services.navigator.handlers import STAGE as NAVIGATOR
from services.navigator.handlers import NavigatorHandlers
from services.navigator.index import DocumentIndex
from services.navigator.index_cache import IndexSource, NoDocumentsError
from services.navigator.main import routes as navigator_routes
from services.navigator.models import NavigatorModels
from services.navigator.models import configured_models as navigator_models
from services.verifier.handlers import STAGE as VERIFIER
from services.verifier.handlers import VerifierHandlers
from services.verifier.main import routes as verifier_routes
from services.verifier.models import VerifierModels
from services.verifier.models import configured_models as verifier_models
from shared.adapters.cache import AnswerCache
from shared.adapters.memory.bus import InMemoryBus
from shared.adapters.memory.queries import InMemoryQueryStore
from shared.app.answer_key import EXTRACTIVE
from shared.app.page_texts import PageStore
from shared.model.documents import DocumentRecord
from shared.model.events import (
    AnswerVerified,
    ContextCompressed,
    NodesSelected,
    QueryFailed,
    QueryReceived,
)
from shared.model.ids import DEFAULT_TENANT
from shared.model.query import CompressedContext, NavigationResult, NavigationSummary, QuerySettings, VerifiedAnswer
from shared.ports.model_roles import AnswerGenerator, NodeScorer
from shared.settings import Settings


@dataclass(frozen=True)
class QueryModels:
    """Every model a query is ranked and checked with."""

    navigator: NavigatorModels
    verifier: VerifierModels

    @classmethod
    def configured(cls, settings: Settings) -> QueryModels:
        """The models the stages' bootstraps load for `settings`."""
        return cls(navigator=navigator_models(settings), verifier=verifier_models(settings))

    def with_ranking(self, navigator: NavigatorModels) -> QueryModels:
        """The same checks with other ranking models (a cross-validation fold's)."""
        return QueryModels(navigator=navigator, verifier=self.verifier)


class HeldIndexes:
    """Document indexes already in memory, served to the navigator as its index source and to the
    verifier as its page store (the harness's documents, blanked pages included)."""

    def __init__(self, indexes: list[DocumentIndex]) -> None:
        if not indexes:
            raise ValueError("no document to ask over: hand at least one DocumentIndex")
        self._by_id = {ix.doc_id: ix for ix in indexes}

    async def indexes(self, doc_ids: list[str] | None, tenant: str = DEFAULT_TENANT) -> list[DocumentIndex]:
        if not doc_ids:
            return list(self._by_id.values())
        missing = [d for d in doc_ids if d not in self._by_id]
        if missing:
            raise NoDocumentsError(f"no document matches {missing[0]!r}")
        return [self._by_id[d] for d in doc_ids]

    async def warm(self, doc_id: str) -> None:
        return None

    def forget(self, doc_id: str) -> None:
        return None

    async def get_document(self, doc_id: str) -> DocumentRecord | None:
        index = self._by_id.get(doc_id)
        return index.record if index else None

    async def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord | None]:
        return {doc_id: await self.get_document(doc_id) for doc_id in doc_ids}

    async def get_pages(self, doc_id: str) -> list[str]:
        index = self._by_id.get(doc_id)
        return list(index.pages) if index else []

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]:
        pages = await self.get_pages(doc_id)
        return {n: pages[n - 1] for n in numbers if 1 <= n <= len(pages)}


@dataclass(frozen=True)
class PathRun:
    """What one question went through: how it ended, and what the navigator selected and the
    compressor handed on (None for a stage it did not reach)."""

    end: AnswerVerified | QueryFailed
    navigation: NavigationResult | None
    context: CompressedContext | None


class QueryPath:
    """The three query stages attached to one in-memory bus, as their `main.py` declares them."""

    def __init__(
        self,
        indexes: IndexSource,
        pages: PageStore,
        models: QueryModels,
        *,
        scorer: NodeScorer | None = None,
        generator: AnswerGenerator | None = None,
        cache: AnswerCache | None = None,
        answered_by: str = EXTRACTIVE,
    ) -> None:
        self.bus, self.queries = InMemoryBus(), InMemoryQueryStore()
        navigator = NavigatorHandlers(indexes, self.bus, self.queries, scorer=scorer, cache=cache,
                                      answered_by=answered_by, models=models.navigator)
        compressor = CompressorHandlers(self.bus, self.queries, pages)
        verifier = VerifierHandlers(pages, self.bus, self.queries, generator=generator, cache=cache,
                                    models=models.verifier)
        self.bus.attach(NAVIGATOR, navigator_routes(navigator))
        self.bus.attach(COMPRESSOR, compressor_routes(compressor))
        self.bus.attach(VERIFIER, verifier_routes(verifier))

    async def ask(
        self, question: str, doc_ids: list[str] | None, settings: QuerySettings, tenant: str = DEFAULT_TENANT
    ) -> PathRun:
        """Publish the question and let every stage handle what it is handed, as on Kafka."""
        received = QueryReceived(query_id=uuid.uuid4().hex, question=question, doc_ids=doc_ids or [],
                                 settings=settings, tenant=tenant)
        return await self._run(received)

    async def verify(
        self, context: CompressedContext, settings: QuerySettings, navigation: NavigationResult,
        documents: list[tuple[str, int]], tenant: str = DEFAULT_TENANT,
    ) -> VerifiedAnswer:
        """The verifier stage's answer to passages found some other way (a baseline's)."""
        handed = ContextCompressed(query_id=uuid.uuid4().hex, question=context.question, settings=settings,
                                   tenant=tenant, documents=documents,
                                   navigation=NavigationSummary.of(navigation), context=context)
        run = await self._run(handed)
        if not isinstance(run.end, AnswerVerified):
            raise RuntimeError(f"the {run.end.stage} stage failed: {run.end.reason}")
        return run.end.outcome.answer

    async def _run(self, first: QueryReceived | ContextCompressed) -> PathRun:
        query_id = first.query_id
        await self.bus.publish(first)
        await self.bus.drain()
        mine = [e for e in self.bus.published if getattr(e, "query_id", None) == query_id]
        ends = [e for e in mine if isinstance(e, (AnswerVerified, QueryFailed))]
        if not ends:
            raise RuntimeError("the query ended without an answer or a failure; see the log")
        selected = [e for e in mine if isinstance(e, NodesSelected)]
        compressed = [e for e in mine if isinstance(e, ContextCompressed)]
        # Nothing of a finished query is kept: a harness asks thousands through one path.
        self.bus.published.clear()
        return PathRun(
            end=ends[-1],
            navigation=selected[-1].navigation if selected else None,
            context=compressed[-1].context if compressed else None,
        )
