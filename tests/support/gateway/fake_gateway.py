"""The gateway on in-memory fakes of its ports: the app, its lifespan and its routes run as in
production, with the stages replaced by an answer the test gives (`FakeGateway.answer_with`).

    fake = FakeGateway()
    with fake.client() as client:  # the lifespan runs: the outbox relay, the deletions
        client.post("/v1/documents", files=...)
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from services.gateway.app import create_app
from services.gateway.bootstrap import assemble, serving
from services.gateway.ports import Gateway
from services.gateway.stage_watch import QUERY_STAGES
from shared.adapters.memory.chats import InMemoryChatStore
from shared.model.clock import utc_now
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import AnswerVerified, Event, QueryFailed, QueryOutcome, QueryProgress, QueryReceived
from shared.model.heartbeats import Heartbeat
from shared.model.listing import DocumentPage
from shared.model.query import Citation, SentenceCheck, VerifiedAnswer
from shared.ports.model_roles import FollowUpWriter
from shared.settings import Settings
from tests.support.fakes import FakeKeyStore, FakeOutbox, FakeQueryStore, FakeRepository, RecordingPublisher

BASE_URL = "http://127.0.0.1:8000"  # the gateway answers only the Host names it is configured for


class MemoryBlobs:
    scheme = "memory"


class FakeGatewayStore(FakeRepository):
    """The fake repository with what only the gateway asks of the store."""

    blobs = MemoryBlobs()

    async def list_page(self, tenant: str, limit: int, before: int | None = None,
                        status: DocumentStatus | None = None) -> DocumentPage:
        # Positions in upload order from 1, listed newest first, as the Mongo store's.
        positions = [(i, r) for i, r in enumerate(self._readable().values(), start=1) if r.tenant == tenant]
        below = [(i, r) for i, r in reversed(positions) if before is None or i < before]
        chosen = [(i, r) for i, r in below if status is None or r.status == status][:limit]
        more = bool(chosen) and any(i < chosen[-1][0] for i, _ in below)
        return DocumentPage(records=[r for _, r in chosen], next_position=chosen[-1][0] if more else None)

    async def ping(self) -> None:
        return None

    async def forget_cached(self, doc_id: str) -> int:
        entries = [k for k in self.cached if doc_id in self.cache_refs.get(k, ())]
        for entry in entries:
            self.cached.pop(entry)
        return len(entries)

    async def owned_leftovers(self) -> list[str]:
        return []


@dataclass
class FakeHeartbeats:
    alive: tuple[str, ...] = QUERY_STAGES

    async def seen_since(self, since: object) -> list[Heartbeat]:
        return [Heartbeat(stage=stage, instance=f"{stage}:1", seen_at=utc_now(), partitions=1) for stage in self.alive]


Answer = Callable[[QueryReceived], AnswerVerified | QueryFailed | None]
Progress = Callable[[QueryReceived], list[QueryProgress]]


class AnsweringBus(RecordingPublisher):
    """Records what the gateway publishes; a published query is answered by `answer` (None:
    nobody answers), as the stages would over Kafka: first the stages' `progress`, then, after
    `answer_after_s`, the answer."""

    def __init__(self) -> None:
        super().__init__()
        self.answer: Answer = lambda _: None
        self.progress: Progress = lambda _: []
        self.answer_after_s = 0.0
        self.gateway: Gateway | None = None

    async def publish(self, event: Event) -> None:
        await super().publish(event)
        if isinstance(event, QueryReceived) and self.gateway is not None:
            gateway = self.gateway
            for progress in self.progress(event):
                if gateway.progress.holds(progress):
                    gateway.progress.deliver(progress)
            reply = self.answer(event)
            if reply is None:
                return
            if self.answer_after_s:
                asyncio.get_running_loop().call_later(self.answer_after_s, gateway.waiter.resolve, reply)
            else:
                gateway.waiter.resolve(reply)


@dataclass
class FakeGateway:
    settings: Settings = field(default_factory=lambda: Settings(auth="off", kafka_bootstrap="127.0.0.1:1",
                                                                mongo_url="mongodb://127.0.0.1:1/"))
    store: FakeGatewayStore = field(default_factory=FakeGatewayStore)
    queries: FakeQueryStore = field(default_factory=FakeQueryStore)
    chats: InMemoryChatStore = field(default_factory=InMemoryChatStore)
    outbox: FakeOutbox = field(default_factory=FakeOutbox)
    keys: FakeKeyStore = field(default_factory=FakeKeyStore)
    heartbeats: FakeHeartbeats = field(default_factory=FakeHeartbeats)
    bus: AnsweringBus = field(default_factory=AnsweringBus)
    follow_ups: FollowUpWriter | None = None

    def answer_with(self, answer: Answer) -> None:
        self.bus.answer = answer

    @asynccontextmanager
    async def connect(self, settings: Settings) -> AsyncIterator[Gateway]:
        async def kafka_answers(timeout_s: float) -> bool:
            return True

        gateway = assemble(settings, self.store, self.queries, self.chats, self.outbox, self.keys, self.heartbeats,
                           self.bus, kafka_answers, self.follow_ups)
        self.bus.gateway = gateway
        async with serving(gateway) as running:
            yield running

    def app(self) -> FastAPI:
        return create_app(self.settings, connect=self.connect)

    @contextmanager
    def client(self) -> Iterator[TestClient]:
        with TestClient(self.app(), base_url=BASE_URL) as client:
            yield client


def verified(event: QueryReceived, answer: str, sentences: Sequence[SentenceCheck] = (),
             citations: Sequence[Citation] = (), confidence: float = 0.8, abstained: bool = False) -> AnswerVerified:
    """The answer event the stages would publish for `event`."""
    outcome = QueryOutcome(mode="dfs", answer=VerifiedAnswer(
        question=event.question, answer=answer, sentences=list(sentences), citations=list(citations),
        confidence=confidence, abstained=abstained))
    return AnswerVerified(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                          settings=event.settings, tenant=event.tenant, outcome=outcome)


def supported(texts: Sequence[str], citation: Citation) -> list[SentenceCheck]:
    """Each text as a sentence its cited page supports."""
    return [SentenceCheck(text=t, citation=citation, signals={}, score=0.9, grounded=True, verdict="supported")
            for t in texts]


def with_manual(fake: FakeGateway, answer: Answer) -> FakeGateway:
    """`fake` holding one ready document, "manual", its questions answered by `answer`."""
    fake.store.documents["manual"] = DocumentRecord(doc_id="manual", file_name="manual.pdf", page_count=2,
                                                    status=DocumentStatus.READY, tenant=fake.settings.tenant)
    fake.answer_with(answer)
    return fake


@contextmanager
def served(app: FastAPI) -> Iterator[int]:
    """`app` served by uvicorn on a loopback port (for clients that speak real HTTP); its port."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start within 30 s")
        time.sleep(0.05)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
