"""What every stage process shares: broker, MongoDB, delivery ledger, metrics, lifecycle.

`shared.adapters.kafka.runner` creates one `StageRuntime` per stage process from the stage's
declaration (`shared.stage.Stage`) and runs `runtime.app` (a FastStream app).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from faststream import FastStream
from faststream.kafka import KafkaBroker, Topic
from faststream.kafka.annotations import KafkaMessage
from faststream.middlewares import AckPolicy
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase

from shared.adapters.blobs import make_blob_store
from shared.adapters.health import StageHealth, run_health_checks
from shared.adapters.heap import freeze_started_heap
from shared.adapters.kafka.broker import Bus, make_broker, message_itself
from shared.adapters.kafka.commits import BatchedCommits
from shared.adapters.kafka.delivery import GiveUp, Handler, RawMessage, ReliableConsumer
from shared.adapters.kafka.topics import ensure_topics
from shared.adapters.logs import log_fields
from shared.adapters.metrics import (
    HANDLER_SECONDS,
    STAGE_METRICS_PORTS,
    record_backend_checks,
    run_lag_reporter,
    start_metrics_server,
)
from shared.adapters.mongo.document_keys import MongoDocumentKeys
from shared.adapters.mongo.heartbeats import MongoHeartbeats, this_instance
from shared.adapters.mongo.ledger import DeliveryLedger
from shared.adapters.mongo.queries import MongoQueryRepository
from shared.adapters.mongo.store import MongoRepository, connect
from shared.adapters.sealing import EventSealer
from shared.model.delivery import Delivery
from shared.model.events import Event
from shared.settings import Settings, get_settings
from shared.text.secrets import redact

logger = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)

LEDGER_RETENTION = timedelta(days=7)


class NotStartedError(RuntimeError):
    pass


class AssignmentLogger(ConsumerRebalanceListener):
    """One structured line per rebalance: which partitions this process now owns. Offsets
    pending in `commits` are committed before partitions are given up."""

    def __init__(self, stage: str, group: str, commits: BatchedCommits | None = None) -> None:
        self.stage = stage
        self.group = group
        self.commits = commits

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if self.commits is not None:
            await self.commits.flush()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        logger.info(
            "partitions assigned",
            extra=log_fields(
                stage=self.stage, group=self.group, pid=os.getpid(),
                partitions=sorted(f"{tp.topic}:{tp.partition}" for tp in assigned),
            ),
        )


class StageRuntime:
    def __init__(self, stage: str, settings: Settings | None = None, broker: KafkaBroker | None = None, *,
                 metrics_server: bool = True, mongo_timeout_ms: int | None = None) -> None:
        """`broker`: several stages in one process share one (FastStream's in-memory test broker
        routes one stage's output to the next only within a broker). `metrics_server`: serve
        /metrics on the stage's own port (the gateway serves it on its API port unless
        TREERAG_METRICS_PORT names one). `mongo_timeout_ms`: how long an operation waits for a
        MongoDB server before failing (the driver's default when None)."""
        self.stage = stage
        self.metrics_server = metrics_server
        self.mongo_timeout_ms = mongo_timeout_ms
        self.settings = settings or get_settings()
        self.broker = broker or make_broker(self.settings, stage)
        self.bus = Bus(self.broker, stage, self.settings.topic_prefix)
        self.app = FastStream(
            self.broker,
            logger=logging.getLogger(f"treerag.{stage}"),
            on_startup=[self._on_startup],
            after_startup=[self._after_startup],
            on_shutdown=[self._on_shutdown],
        )
        self._mongo: AsyncMongoClient[dict[str, Any]] | None = None
        self.document_keys: MongoDocumentKeys | None = None
        self._repo: MongoRepository | None = None
        self._queries: MongoQueryRepository | None = None
        self._ledger: DeliveryLedger | None = None
        self._subscribers: list[Any] = []
        self._commits: list[BatchedCommits] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._startup_hooks: list[Callable[[], Awaitable[None]]] = []
        self.health = StageHealth(on_record=record_backend_checks)

    # ------------------------------------------------------------ resources

    @property
    def repo(self) -> MongoRepository:
        if self._repo is None:
            raise NotStartedError(f"the {self.stage} runtime has not started (no MongoDB connection yet)")
        return self._repo

    @property
    def queries(self) -> MongoQueryRepository:
        if self._queries is None:
            raise NotStartedError(f"the {self.stage} runtime has not started (no MongoDB connection yet)")
        return self._queries

    @property
    def database(self) -> AsyncDatabase[dict[str, Any]]:
        """The stage's MongoDB database, for the stores a composition root builds beside the
        repository (the gateway's outbox, keys and heartbeats)."""
        if self._mongo is None:
            raise NotStartedError(f"the {self.stage} runtime has not started (no MongoDB connection yet)")
        return self._mongo[self.settings.mongo_db]

    @property
    def ledger(self) -> DeliveryLedger:
        if self._ledger is None:
            raise NotStartedError(f"the {self.stage} runtime has not started (no MongoDB connection yet)")
        return self._ledger

    def on_startup(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook` once MongoDB is connected, before consumption starts."""
        self._startup_hooks.append(hook)

    # ------------------------------------------------------------ subscriptions

    def subscribe(
        self,
        event_type: type[E],
        handler: Handler[E],
        *,
        give_up: GiveUp | None = None,
        group_id: str | None = None,
        max_poll_interval_ms: int = 5 * 60 * 1000,
        durable_attempts: bool = False,
    ) -> None:
        """Consume `event_type` at least once, in the stage's consumer group (shared by replicas).

        `durable_attempts`: record every attempt in MongoDB before handling (for long messages,
        so a process death counts), and commit each message's offset before the next; otherwise
        only failures are written (see delivery.py) and offsets are committed together every
        `kafka_commit_interval_s` (see commits.py)."""
        group = group_id or f"{self.settings.topic_prefix}treerag-{self.stage}"
        handler = self._opening(handler)
        consumer = ReliableConsumer(
            stage=self.stage,
            group_id=group,
            event_type=event_type,
            handler=handler,
            bus=self.bus,
            ledger_factory=lambda: self.ledger,
            max_attempts=self.settings.max_attempts,
            give_up=give_up,
            durable_attempts=durable_attempts,
        )
        commits = BatchedCommits(self.stage, 0.0 if durable_attempts else self.settings.kafka_commit_interval_s)
        self._commits.append(commits)
        subscriber = self.broker.subscriber(
            Topic(self.bus.topic(event_type.TOPIC), declare=False),
            group_id=group,
            # Acknowledged here: the offset of a handled message goes to `commits`, a failed one
            # rewinds its partition (the message comes again).
            ack_policy=AckPolicy.MANUAL,
            # A new group starts from the oldest message, so nothing published before the
            # stage first started is skipped.
            auto_offset_reset="earliest",
            max_poll_interval_ms=max_poll_interval_ms,
            listener=AssignmentLogger(self.stage, group, commits),
            decoder=message_itself,
            title=f"{self.stage}:{event_type.TOPIC}",
        )

        async def on_message(msg: KafkaMessage) -> None:
            received = time.perf_counter()
            record: Any = msg.raw_message  # one aiokafka ConsumerRecord (not a batch)
            key = record.key.decode("utf-8", errors="replace") if record.key else None
            try:
                await consumer(RawMessage(record.topic, record.partition, record.offset, key, msg.body, received))
            except Exception as exc:
                # The consumer raises only to have the message again: rewind its partition.
                logger.warning("message not handled; it comes again", exc_info=exc,
                               extra=log_fields(stage=self.stage, topic=record.topic, offset=record.offset))
                await msg.nack()
                return
            else:
                # FastStream's in-memory test broker has no offsets to commit.
                if isinstance(msg.consumer, AIOKafkaConsumer):
                    await commits.handled(msg.consumer, record.topic, record.partition, record.offset)
            finally:
                # The whole handling: decoding, attempts bookkeeping, the work, its store writes
                # and publications, a dead letter; the same span as the timing a query carries.
                HANDLER_SECONDS.labels(self.stage).observe(time.perf_counter() - received)

        subscriber(on_message)
        self._subscribers.append(subscriber)

    def subscribe_broadcast(self, event_type: type[E], handler: Handler[E],
                            wanted: Callable[[E], bool] | None = None) -> None:
        """Every replica reads every `event_type` message from the newest offset, at most once:
        for in-memory caches, where a missed message only costs a later load from the store.
        With `wanted`, a message it refuses is dropped before its text is opened."""
        group = f"{self.settings.topic_prefix}treerag-{self.stage}-{uuid.uuid4().hex[:12]}"
        handler = self._opening(handler)
        subscriber = self.broker.subscriber(
            Topic(self.bus.topic(event_type.TOPIC), declare=False),
            group_id=group,
            ack_policy=AckPolicy.ACK_FIRST,
            auto_offset_reset="latest",
            decoder=message_itself,
            title=f"{self.stage}:{event_type.TOPIC}:broadcast",
        )

        async def on_message(msg: KafkaMessage) -> None:
            record: Any = msg.raw_message  # one aiokafka ConsumerRecord (not a batch)
            try:
                event = event_type.model_validate_json(msg.body)
                if wanted is not None and not wanted(event):
                    return
                delivery = Delivery(stage=self.stage, topic=record.topic, partition=record.partition,
                                    offset=record.offset, attempt=1, queued_ms=0.0)
                await handler(event, delivery)
            except Exception:
                logger.warning("broadcast message skipped", exc_info=True,
                               extra=log_fields(stage=self.stage, topic=record.topic, offset=record.offset))

        subscriber(on_message)
        self._subscribers.append(subscriber)

    def _opening(self, handler: Handler[E]) -> Handler[E]:
        """`handler`, given each event with its sealed document text opened (sealing.py); an
        event whose documents' keys are gone fails for good (`TextErased`)."""

        async def opened(event: E, delivery: Delivery) -> None:
            sealer = self.bus.sealer
            await handler(await sealer.open(event) if sealer is not None else event, delivery)

        return opened

    # ------------------------------------------------------------ lifecycle

    def _metrics_port(self) -> int:
        port = self.settings.metrics_port
        return STAGE_METRICS_PORTS.get(self.stage, 9100) if port is None else port

    async def _on_startup(self) -> None:
        logger.info(
            "starting",
            extra=log_fields(
                stage=self.stage, kafka=self.settings.kafka_bootstrap,
                kafka_security=self.settings.kafka_security_protocol, mongo_db=self.settings.mongo_db, pid=os.getpid(),
            ),
        )
        if self.metrics_server:
            start_metrics_server(self._metrics_port(), addr=self.settings.metrics_host, health=self.health)
        await ensure_topics(self.settings)
        options = {} if self.mongo_timeout_ms is None else {"serverSelectionTimeoutMS": self.mongo_timeout_ms}
        self._mongo = connect(self.settings.mongo_url, **options)
        self._repo = MongoRepository(self._mongo, self.settings.mongo_db, owns_client=False,
                                     blobs=make_blob_store(self.settings, self._mongo[self.settings.mongo_db]))
        self._queries = MongoQueryRepository(self._mongo, self.settings.mongo_db)
        self._ledger = DeliveryLedger(self._mongo[self.settings.mongo_db])
        self.document_keys = MongoDocumentKeys(self._mongo[self.settings.mongo_db])
        self.bus.sealer = EventSealer(self.document_keys)
        try:
            await self._repo.ping()
        except Exception as exc:
            raise RuntimeError(
                f"MongoDB at {redact(self.settings.mongo_url)} is not reachable ({redact(str(exc))}). "
                "Start it (make up, or scripts/infra/ferretdb.sh start) or fix TREERAG_MONGO_URL."
            ) from exc
        await self._repo.ensure_indexes()
        await self._queries.ensure_indexes()
        await self._ledger.ensure_indexes()
        await self._ledger.purge(LEDGER_RETENTION)
        for hook in self._startup_hooks:
            await hook()

    async def _after_startup(self) -> None:
        for subscriber in self._subscribers:
            if subscriber.consumer is not None:
                self._tasks.append(asyncio.create_task(run_lag_reporter(self.stage, subscriber.consumer)))
        self._tasks.extend(asyncio.create_task(commits.run()) for commits in self._commits)
        self._tasks.append(asyncio.create_task(run_health_checks(self.health, {
            "kafka": lambda: self.broker.ping(timeout=3.0),
            "mongodb": self._mongo_answers,
        })))
        if self._mongo is not None:
            self._tasks.append(asyncio.create_task(self._heartbeat(self._mongo)))
        self.health.mark_started()
        freeze_started_heap()
        logger.info("consuming", extra=log_fields(stage=self.stage, topics=[s.topic_names for s in self._subscribers]))

    async def _mongo_answers(self) -> bool:
        await self.repo.ping()
        return True

    def _owned_partitions(self) -> int:
        return sum(len(s.consumer.assignment()) for s in self._subscribers if s.consumer is not None)

    async def _heartbeat(self, mongo: AsyncMongoClient[dict[str, Any]]) -> None:
        """The row the gateway's /readyz reads: this process is alive and its event loop turning."""
        heartbeats = MongoHeartbeats(mongo[self.settings.mongo_db])
        purged = False
        while True:
            try:
                if not purged:
                    await heartbeats.purge_stale()
                    purged = True
                await heartbeats.beat(self.stage, this_instance(), self._owned_partitions())
            except Exception as exc:  # the store is down: the stage looks dead until it is back
                logger.warning("heartbeat not written", extra=log_fields(error=type(exc).__name__))
            await asyncio.sleep(self.settings.heartbeat_interval_s)

    async def _on_shutdown(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        for commits in self._commits:  # consumers still run until the broker stops
            commits.stopping()
            try:
                await commits.flush()
            except Exception:  # what stays pending is redelivered and recomputed
                logger.warning("offsets not committed at shutdown", exc_info=True)
        if self._mongo is not None:
            try:  # stopped on purpose: not alive any more, at once
                await MongoHeartbeats(self._mongo[self.settings.mongo_db]).remove(this_instance())
            except Exception:
                logger.warning("heartbeat not removed", exc_info=True)

    async def start(self) -> None:
        """Start as FastStream's `run` would, inside another application's lifecycle (the
        gateway's): connect, run the startup hooks, consume, then the health checks and heartbeat."""
        await self._on_startup()
        await self.broker.start()
        await self._after_startup()

    async def stop(self) -> None:
        """The reverse of `start`: heartbeat removed, consumers stopped, MongoDB released."""
        await self._on_shutdown()
        await self.broker.stop()
        await self.close()

    async def close(self) -> None:
        """Release MongoDB after the broker stopped (FastStream's after_shutdown)."""
        if self._mongo is not None:
            await self._mongo.close()
            self._mongo = None
