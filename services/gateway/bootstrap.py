"""The gateway's composition root: its ports built from settings (MongoDB and Kafka, connected
by the stage runtime every stage runs on), or handed in (tests give the fakes of the same ports).

`connected(settings)` yields a running `Gateway` for as long as the app serves: the answer
listener consuming, the outbox relay publishing what Kafka did not take, the deletions a stopped
gateway left being finished.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from services.gateway.answers import AnswerWaiter
from services.gateway.deletions import BackgroundDeletions
from services.gateway.followups import ModelFollowUps
from services.gateway.ports import Gateway
from services.gateway.schemas import QUERY_TIMEOUT_MAX_S
from services.gateway.stage_watch import LiveStages
from services.gateway.store import GatewayStore
from shared.adapters.kafka.runtime import StageRuntime
from shared.adapters.llm import make_llm
from shared.adapters.logs import log_fields
from shared.adapters.metrics import MESSAGES_CONSUMED, export_known_series
from shared.adapters.mongo.api_keys import MongoKeyStore
from shared.adapters.mongo.chats import MongoChatStore
from shared.adapters.mongo.heartbeats import MongoHeartbeats
from shared.adapters.mongo.outbox import MongoOutbox
from shared.app.outbox import OutboxPublisher
from shared.model.delivery import Delivery
from shared.model.events import (
    AnswerVerified,
    DocumentDeleted,
    DocumentUploaded,
    QueryFailed,
    QueryProgress,
    QueryReceived,
)
from shared.ports.api_keys import KeyStore
from shared.ports.bus import Publisher
from shared.ports.chats import ChatStore
from shared.ports.document_keys import DocumentKeys
from shared.ports.heartbeats import HeartbeatReader
from shared.ports.model_roles import FollowUpWriter
from shared.ports.outbox import Outbox
from shared.ports.queries import QueryStore
from shared.settings import Settings

logger = logging.getLogger(__name__)

STAGE = "gateway"

Connector = Callable[[Settings], AbstractAsyncContextManager[Gateway]]


def assemble(settings: Settings, documents: GatewayStore, queries: QueryStore, chats: ChatStore, outbox: Outbox,
             keys: KeyStore, heartbeats: HeartbeatReader, bus: Publisher,
             ping_kafka: Callable[[float], Awaitable[bool]], follow_ups: FollowUpWriter | None = None,
             document_keys: DocumentKeys | None = None) -> Gateway:
    """The gateway on these ports (and the model that rewrites follow-ups, when there is one)."""
    return Gateway(
        settings=settings, documents=documents, queries=queries, chats=chats,
        outbox=OutboxPublisher(outbox, bus, send_timeout_s=settings.publish_timeout_s),
        keys=keys, heartbeats=heartbeats, bus=bus, ping_kafka=ping_kafka,
        waiter=AnswerWaiter(queries),
        # A query started before a deletion may store its result until its deadline has passed.
        deletions=BackgroundDeletions(documents, queries,
                                      late_writes_s=max(settings.query_timeout_s, QUERY_TIMEOUT_MAX_S), chats=chats,
                                      keys=document_keys),
        stages=LiveStages(heartbeats, settings.heartbeat_ttl_s),
        follow_ups=follow_ups,
        document_keys=document_keys,
    )


def configured_follow_ups(settings: Settings) -> FollowUpWriter | None:
    """The configured model as the follow-up writer; None offline (the rules complete them)."""
    llm = make_llm(settings)
    return ModelFollowUps(llm, f"llm:{llm.model}") if llm is not None else None


@asynccontextmanager
async def serving(gateway: Gateway) -> AsyncIterator[Gateway]:
    """The gateway's own background work while it serves: the outbox relay, and the deletions a
    stopped gateway left."""
    relay = asyncio.create_task(gateway.outbox.run_relay(gateway.settings.outbox_relay_interval_s))
    gateway.deletions.resume()
    try:
        yield gateway
    finally:
        relay.cancel()
        await gateway.deletions.close()


@asynccontextmanager
async def connected(settings: Settings) -> AsyncIterator[Gateway]:
    """The gateway on MongoDB and Kafka, for as long as the block runs."""
    runtime = StageRuntime(
        STAGE, settings,
        # Scrapers read /metrics on the API port (with an admin key), or on TREERAG_METRICS_PORT.
        metrics_server=settings.metrics_port is not None,
        # Fails a request over to 503 well within its budget when MongoDB is down.
        mongo_timeout_ms=int(settings.request_timeout_s * 500),
    )
    built: list[Gateway] = []

    async def on_answer(event: AnswerVerified | QueryFailed, delivery: Delivery) -> None:
        MESSAGES_CONSUMED.labels(STAGE, delivery.topic).inc()
        if built:
            built[0].waiter.resolve(event)

    # Each replica reads every answer (its own group, newest first) and resolves its own requests.
    runtime.subscribe_broadcast(AnswerVerified, on_answer)
    runtime.subscribe_broadcast(QueryFailed, on_answer)

    async def on_progress(event: QueryProgress, delivery: Delivery) -> None:
        MESSAGES_CONSUMED.labels(STAGE, delivery.topic).inc()
        if built:
            built[0].progress.deliver(event)

    # Every replica reads all progress too; another replica's is dropped before its text is opened.
    runtime.subscribe_broadcast(QueryProgress, on_progress,
                                wanted=lambda event: bool(built) and built[0].progress.holds(event))

    async def on_deleted(event: DocumentDeleted, delivery: Delivery) -> None:
        MESSAGES_CONSUMED.labels(STAGE, delivery.topic).inc()
        if built:
            built[0].deleted.note(event.doc_id)

    # Every replica learns of every deletion: none serves an answer citing the document after it.
    runtime.subscribe_broadcast(DocumentDeleted, on_deleted)

    async def build() -> None:
        db = runtime.database
        outbox = MongoOutbox(db)
        chats = MongoChatStore(db)
        await outbox.ensure_indexes()
        await chats.ensure_indexes()
        built.append(assemble(
            settings, runtime.repo, runtime.queries, chats, outbox, MongoKeyStore(db.client, settings.mongo_db),
            MongoHeartbeats(db), runtime.bus, lambda timeout_s: runtime.broker.ping(timeout=timeout_s),
            configured_follow_ups(settings), runtime.document_keys,
        ))

    runtime.on_startup(build)
    export_known_series(STAGE, produced=[runtime.bus.topic(DocumentUploaded.TOPIC),
                                         runtime.bus.topic(QueryReceived.TOPIC)])
    for topic in (AnswerVerified.TOPIC, QueryFailed.TOPIC, QueryProgress.TOPIC, DocumentDeleted.TOPIC):
        MESSAGES_CONSUMED.labels(STAGE, runtime.bus.topic(topic))
    await runtime.start()
    try:
        async with serving(built[0]) as gateway:
            logger.info("gateway ready", extra=log_fields(kafka=settings.kafka_bootstrap, mongo_db=settings.mongo_db))
            yield gateway
    finally:
        await runtime.stop()

