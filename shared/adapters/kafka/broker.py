"""The FastStream Kafka broker every service uses, and the one way events are published."""

from __future__ import annotations

import logging
import time
from typing import Any

from faststream.kafka import KafkaBroker
from faststream.message import StreamMessage

from shared.adapters.kafka.connection import kafka_connection
from shared.adapters.metrics import MESSAGES_PUBLISHED, PUBLISH_SECONDS
from shared.adapters.sealing import EventSealer
from shared.model.clock import utc_now
from shared.model.events import Event, QueryEvent
from shared.settings import Settings

logger = logging.getLogger(__name__)


def make_broker(settings: Settings, stage: str) -> KafkaBroker:
    """A broker for one stage process, connected as `kafka_connection` says (its producer and every
    consumer). Topics are created by `ensure_topics` (subscribers declare theirs with
    `declare=False`), so every topic gets the settings' partitions and copies."""
    connection = kafka_connection(settings)
    return KafkaBroker(
        connection.bootstrap,
        security=connection.broker_security(),
        client_id=f"treerag-{stage}",
        # With one copy per partition the leader's write is the only one: waiting for "all" in-sync
        # replicas waits for the same broker, so acks=1 keeps durability and saves a step. With more
        # copies, or the broker's default (unknown here), a write counts once every in-sync copy has it.
        acks=1 if settings.kafka_topic_replication == 1 else "all",
        # Send at once: events are single small messages on a latency path, not batches.
        linger_ms=0,
        # FastStream's per-message "Received/Processed" lines go to DEBUG; ours carry the ids.
        logger=logging.getLogger(f"treerag.{stage}.broker"),
        log_level=logging.DEBUG,
        graceful_timeout=30.0,
        # Handlers take the message as it came (see `message_itself`): no dependency injection,
        # which ran a worker-thread hop and a JSON decode of the body for every message before
        # the handler decoded the same body into its event.
        apply_types=False,
        # No FastStream metrics middleware: the treerag_* series (shared/adapters/metrics.py) count
        # and time every message already; a second set is CPU spent on every message for nothing.
    )


def message_itself(message: StreamMessage[Any]) -> StreamMessage[Any]:
    """A subscriber's decoder that hands its handler the message (body bytes, raw record,
    consumer) undecoded: the handler validates the body into its event in one step."""
    return message


class Bus:
    """Publishes events with the correlation id as key, and counts them.

    `publish` returns once the broker acknowledged the write, so a handler that publishes
    before returning never lets its input offset be committed ahead of its output.
    """

    def __init__(self, broker: KafkaBroker, stage: str, prefix: str = "") -> None:
        self.broker = broker
        self.stage = stage
        self.prefix = prefix
        # Set once the store is connected: document text goes on the bus sealed (sealing.py).
        self.sealer: EventSealer | None = None

    def topic(self, name: str) -> str:
        return f"{self.prefix}{name}"

    async def publish(self, event: Event) -> None:
        if not event.producer:
            event.producer = self.stage
        self._stamp_send(event)
        topic = self.topic(event.TOPIC)
        sending = time.perf_counter()
        carried = event.as_published()
        sent = await self.sealer.seal(carried) if self.sealer is not None else carried
        await self.broker.publish(
            sent.model_dump_json().encode(),
            topic=topic,
            key=event.key.encode(),
            headers={"event_type": event.TOPIC, "schema_version": str(event.schema_version)},
            correlation_id=event.key,
        )
        PUBLISH_SECONDS.labels(self.stage).observe(time.perf_counter() - sending)
        MESSAGES_PUBLISHED.labels(self.stage, topic).inc()

    def _stamp_send(self, event: Event) -> None:
        """The event is produced now: the next stage's queue time starts here, and this stage's
        own timing entry (the last one, when it has added it) ends here."""
        sent = utc_now()
        event.produced_at = sent
        if isinstance(event, QueryEvent) and event.timings:
            own = event.timings[-1]
            if own.stage == self.stage and own.started_at is not None:
                own.processing_ms = round(max(0.0, (sent - own.started_at).total_seconds()) * 1000, 3)

    async def publish_raw(self, topic: str, payload: bytes, key: str | None) -> None:
        await self.broker.publish(payload, topic=topic, key=key.encode() if key else None)
        MESSAGES_PUBLISHED.labels(self.stage, topic).inc()
