"""Topic names and their creation with enough partitions for several consumers per stage."""

from __future__ import annotations

import asyncio
import logging
import time

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.errors import KafkaConnectionError, KafkaError

from shared.model.events import ALL_TOPICS, dlq_topic

logger = logging.getLogger(__name__)

TOPIC_ALREADY_EXISTS = 36
# One copy of each partition: the broker that takes a write is the only one holding it, so
# producers wait for that broker alone (acks=1 gives the same durability as acks=all here).
REPLICATION_FACTOR = 1


class TopicSetupError(RuntimeError):
    pass


def service_topics(prefix: str = "") -> list[str]:
    """Every topic the services use: the event topics and their dead-letter topics."""
    topics = [f"{prefix}{t}" for t in ALL_TOPICS]
    return [*topics, *(dlq_topic(t) for t in topics)]


async def _start_admin(bootstrap: str, timeout_s: float) -> AIOKafkaAdminClient:
    deadline = time.monotonic() + timeout_s
    while True:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
        try:
            await admin.start()
            return admin
        except KafkaConnectionError as exc:
            await admin.close()
            if time.monotonic() > deadline:
                raise TopicSetupError(
                    f"Kafka at {bootstrap} did not answer within {timeout_s:.0f}s ({exc}). "
                    "Start it (make up, or scripts/infra/kafka.sh start) or fix TREERAG_KAFKA_BOOTSTRAP."
                ) from exc
            await asyncio.sleep(1.0)


async def ensure_topics(
    bootstrap: str, partitions: int, topics: list[str] | None = None, timeout_s: float = 60.0, prefix: str = ""
) -> None:
    """Create missing topics with `partitions` partitions; grow existing ones that have fewer.

    A topic never shrinks (Kafka cannot), so a cluster set up with more partitions keeps them.
    """
    names = topics if topics is not None else service_topics(prefix)
    admin = await _start_admin(bootstrap, timeout_s)
    try:
        response = await admin.create_topics(
            [NewTopic(name, num_partitions=partitions, replication_factor=REPLICATION_FACTOR) for name in names]
        )
        for entry in response.to_object()["topic_errors"]:
            code = entry["error_code"]
            if code not in (0, TOPIC_ALREADY_EXISTS):
                raise TopicSetupError(
                    f"Kafka refused to create topic {entry['topic']!r}: error {code} {entry['error_message']}"
                )
        described = await admin.describe_topics(names)
        grow = {
            t["topic"]: NewPartitions(partitions)
            for t in described
            if t["error_code"] == 0 and len(t["partitions"]) < partitions
        }
        if grow:
            logger.info("adding partitions", extra={"fields": {"topics": sorted(grow), "partitions": partitions}})
            await admin.create_partitions(grow)
    except KafkaError as exc:
        raise TopicSetupError(f"topic setup on {bootstrap} failed: {exc!r}") from exc
    finally:
        await admin.close()
