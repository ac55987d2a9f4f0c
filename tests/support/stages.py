"""The query stages' handlers over in-memory ports, and the events that drive them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from services.compressor.handlers import CompressorHandlers
from services.navigator.handlers import NavigatorHandlers
from services.navigator.index_cache import IndexCache
from services.verifier.handlers import VerifierHandlers
from shared.adapters.cache import AnswerCache
from shared.model.clock import utc_now
from shared.model.delivery import Delivery, Failure
from shared.model.events import QueryEvent, QueryReceived, StageTiming
from shared.model.query import QuerySettings
from tests.support.fakes import FakeQueryStore, FakeRepository, RecordingPublisher
from tests.support.navigation import configured

TENANT = "acme"  # whose queries the tests send (and whose documents they store)
GATEWAY_TIMING = StageTiming(stage="gateway", queued_ms=0.0, processing_ms=1.5)


def delivery(stage: str, topic: str, offset: int = 0, attempt: int = 1) -> Delivery:
    return Delivery(stage=stage, topic=topic, partition=0, offset=offset, attempt=attempt, queued_ms=3.0)


def failure(event: QueryEvent, stage: str, error_type: str, reason: str, attempts: int = 3) -> Failure:
    """What the delivery layer tells a stage's give-up hook about a message it ended."""
    return Failure(stage, event.TOPIC, event.query_id, error_type, reason, attempts, tenant=event.tenant,
                   deadline=event.deadline, timings=tuple(event.timings))


def question(text: str, query_id: str = "q1", doc_ids: list[str] | None = None) -> QueryReceived:
    """A query as the gateway publishes it: a deadline, a tenant and its own timing."""
    return QueryReceived(
        query_id=query_id, question=text, doc_ids=doc_ids or [], settings=QuerySettings(max_answer_sentences=2),
        tenant=TENANT, deadline=utc_now() + timedelta(minutes=5), timings=[GATEWAY_TIMING],
    )


@dataclass
class QueryStages:
    """Navigator, compressor and verifier sharing one repository, query store and publisher,
    as the services share MongoDB and Kafka."""

    repository: FakeRepository = field(default_factory=FakeRepository)
    queries: FakeQueryStore = field(default_factory=FakeQueryStore)
    bus: RecordingPublisher = field(default_factory=RecordingPublisher)

    def __post_init__(self) -> None:
        self.indexes = IndexCache(self.repository)
        self.navigator = NavigatorHandlers(self.indexes, self.bus, self.queries, models=configured(),
                                           cache=AnswerCache(self.repository))
        self.compressor = CompressorHandlers(self.bus, self.queries, self.repository)
        self.verifier = self.new_verifier()

    def new_verifier(self) -> VerifierHandlers:
        """A verifier process of its own (a restart, or another replica): nothing in memory."""
        return VerifierHandlers(self.repository, self.bus, self.queries, cache=AnswerCache(self.repository))
