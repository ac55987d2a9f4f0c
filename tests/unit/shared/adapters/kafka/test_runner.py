"""The stages' declared routes on FastStream's in-memory Kafka broker (`TestKafkaBroker`): the
runner subscribes each stage to its input topics, and an event published on a stage's input
topic comes out as the event the next stage consumes, through the same runtime and delivery
code the services run, over in-memory ports instead of MongoDB."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from faststream.kafka import KafkaBroker, TestKafkaBroker

from services.compressor.main import STAGE as COMPRESSOR
from services.indexer.main import STAGE as INDEXER
from services.navigator.main import STAGE as NAVIGATOR
from services.verifier.main import STAGE as VERIFIER
from shared.adapters.kafka.broker import Bus, make_broker
from shared.adapters.kafka.runner import subscribe_stage
from shared.adapters.kafka.runtime import StageRuntime
from shared.model.clock import utc_now
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import (
    ALL_TOPICS,
    AnswerVerified,
    DocumentUploaded,
    QueryFailed,
    QueryReceived,
)
from shared.model.query_records import QueryStatus
from shared.settings import Settings
from shared.stage import Stage, StagePorts
from tests.support.fakes import FakeLedger, FakeQueryStore, FakeRepository
from tests.support.pdfs import manual_pdf
from tests.support.query.documents import plant_manual

STAGES = {stage.name: stage for stage in (INDEXER, NAVIGATOR, COMPRESSOR, VERIFIER)}


class InMemoryRuntime(StageRuntime):
    """A stage runtime whose delivery ledger is in memory (the real one is MongoDB's)."""

    def __init__(self, stage: str, settings: Settings, broker: KafkaBroker, ledger: FakeLedger) -> None:
        super().__init__(stage, settings, broker)
        self._memory_ledger = ledger

    @property
    def ledger(self) -> FakeLedger:  # type: ignore[override]
        return self._memory_ledger


class System:
    """Stages sharing one broker and one set of in-memory ports, plus a record of every
    message published on every topic, by producer."""

    def __init__(self, prefix: str = "") -> None:
        self.settings = Settings(llm="off", embeddings="wordllama", topic_prefix=prefix, max_attempts=2)
        self.broker = make_broker(self.settings, "system")
        self.repository = FakeRepository()
        self.queries = FakeQueryStore()
        self.ledger = FakeLedger()
        self.seen: list[tuple[str, dict[str, Any]]] = []
        for topic in ALL_TOPICS:
            self.broker.subscriber(f"{prefix}{topic}", group_id="observer")(self._observer(topic))

    def _observer(self, topic: str) -> Callable[[dict[str, Any]], Any]:
        async def observe(body: dict[str, Any]) -> None:
            self.seen.append((topic, body))

        return observe

    async def attach(self, stage: Stage[Any]) -> InMemoryRuntime:
        runtime = InMemoryRuntime(stage.name, self.settings, self.broker, self.ledger)
        ports = StagePorts(settings=self.settings, repository=self.repository, queries=self.queries,
                           ledger=self.ledger, bus=runtime.bus)
        await subscribe_stage(stage, runtime, ports)
        return runtime

    def topics_seen(self) -> list[str]:
        """Sorted: the in-memory broker runs a subscriber inside its publisher's call, so the
        order messages are observed in is not the order they were published in."""
        return sorted(topic for topic, _ in self.seen)

    def published_by(self, stage: str) -> set[str]:
        return {topic for topic, body in self.seen if body.get("producer") == stage}


def subscribed_topics(broker: KafkaBroker, prefix: str = "") -> set[str]:
    names = {t.name if hasattr(t, "name") else str(t) for s in broker.subscribers for t in s.topics}
    return {n for n in names if n.startswith(prefix)}


def query(question: str, query_id: str = "q1") -> QueryReceived:
    return QueryReceived(query_id=query_id, question=question, tenant="acme",
                         deadline=utc_now() + timedelta(minutes=1), producer="gateway")


@pytest.mark.parametrize(
    ("name", "topics"),
    [
        ("indexer", {"document.uploaded"}),
        ("navigator", {"query.received", "tree.built", "document.deleted"}),
        ("compressor", {"nodes.selected", "document.deleted"}),
        ("verifier", {"context.compressed", "document.deleted"}),
    ],
)
async def test_each_stage_subscribes_its_input_topics_with_the_configured_prefix(name: str, topics: set[str]) -> None:
    settings = Settings(llm="off", topic_prefix="acme-")
    broker = make_broker(settings, name)
    runtime = InMemoryRuntime(name, settings, broker, FakeLedger())
    ports = StagePorts(settings=settings, repository=FakeRepository(), queries=FakeQueryStore(),
                       ledger=FakeLedger(), bus=runtime.bus)

    await subscribe_stage(STAGES[name], runtime, ports)

    assert subscribed_topics(broker) == {f"acme-{t}" for t in topics}


async def test_a_query_flows_navigator_compressor_verifier_to_an_answer() -> None:
    system = System(prefix="t-")
    await system.repository.put_indexed(plant_manual(tenant="acme"))
    for stage in (NAVIGATOR, COMPRESSOR, VERIFIER):
        await system.attach(stage)

    async with TestKafkaBroker(system.broker):
        await Bus(system.broker, "gateway", "t-").publish(query("How often must the coolant pump be serviced?"))

    assert system.topics_seen() == sorted(["query.received", "nodes.selected", "context.compressed", "answer.verified"])
    for stage in (NAVIGATOR, COMPRESSOR, VERIFIER):
        assert system.published_by(stage.name) <= {e.TOPIC for e in stage.produces}
    [answer] = [AnswerVerified.model_validate(body) for topic, body in system.seen if topic == "answer.verified"]
    assert answer.query_id == "q1" and answer.tenant == "acme"
    assert "500" in answer.outcome.answer.answer
    assert [t.stage for t in answer.timings] == ["navigator", "compressor", "verifier"]
    stored = await system.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.ANSWERED and stored.outcome == answer.outcome


async def test_an_uploaded_pdf_is_indexed_and_warms_the_navigator_before_any_query() -> None:
    system = System()
    data, headings = manual_pdf(chapters=2, sections=2, pages_per_section=1)
    doc_id = hashlib.sha256(data).hexdigest()[:16]
    await system.repository.put_pdf(doc_id, data)
    await system.repository.put_document(DocumentRecord(doc_id=doc_id, file_name="manual.pdf", tenant="acme"))
    await system.attach(INDEXER)
    await system.attach(NAVIGATOR)
    await system.attach(COMPRESSOR)
    await system.attach(VERIFIER)

    async with TestKafkaBroker(system.broker):
        bus = Bus(system.broker, "gateway")
        await bus.publish(DocumentUploaded(doc_id=doc_id, file_name="manual.pdf", size_bytes=len(data),
                                           pdf_ref=f"gridfs:{doc_id}", tenant="acme"))
        assert system.topics_seen() == ["document.uploaded", "tree.built"]  # sorted
        assert system.repository.documents[doc_id].status == DocumentStatus.READY
        loads = system.repository.reads["get_tree"]
        # The indexer stored page vectors and the navigator's warmed index carries them.
        assert system.repository.embeddings[doc_id].page_count == system.repository.documents[doc_id].page_count
        assert system.repository.reads["get_embeddings"] == 1

        await bus.publish(query(f"What is in section {headings[1].title}?"))

    assert "answer.verified" in system.topics_seen() and "query.failed" not in system.topics_seen()
    assert system.repository.reads["get_tree"] == loads  # the query did not load the index


async def test_a_failing_stage_dead_letters_and_tells_the_client() -> None:
    system = System()
    await system.attach(NAVIGATOR)

    async def broken(*_: Any) -> None:
        raise RuntimeError("page store unavailable")

    system.repository.ready_documents = broken  # type: ignore[method-assign]
    dead: list[dict[str, Any]] = []
    system.broker.subscriber("query.received.dlq", group_id="ops")(lambda body: dead.append(body))

    async with TestKafkaBroker(system.broker):
        bus = Bus(system.broker, "gateway")
        for _ in range(system.settings.max_attempts):
            try:
                await bus.publish(query("Which valve opens at 12 bar?"))
            except RuntimeError:
                pass  # the in-memory broker hands the redelivery error back to the publisher

    failed = [QueryFailed.model_validate(body) for topic, body in system.seen if topic == "query.failed"]
    assert len(failed) == 1 and failed[0].stage == "navigator" and "page store unavailable" in failed[0].reason
    assert len(dead) == 1
    stored = await system.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.FAILED
