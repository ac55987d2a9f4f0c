"""Topic names and their creation, with the partitions and copies the settings ask for.

Unset, `kafka_topic_partitions` and `kafka_topic_replication` take the broker's `num.partitions`
and `default.replication.factor`. Kafka ≥ 2.4 would apply them itself for -1 in CreateTopics v4,
but aiokafka sends v3 at most and refuses -1, so they are read from a broker's configuration
(DescribeConfigs) before the topics are created.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaConnectionError, KafkaError

from shared.adapters.kafka.connection import KafkaConnection, check_access, kafka_connection
from shared.model.events import ALL_TOPICS, dlq_topic
from shared.settings import Settings

logger = logging.getLogger(__name__)

TOPIC_ALREADY_EXISTS = 36
# Not allowed to create: fine when the operators created the topic beforehand.
AUTHORIZATION_FAILED = (29, 31)  # TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED
BROKER_PARTITIONS = "num.partitions"
BROKER_REPLICATION = "default.replication.factor"


class TopicSetupError(RuntimeError):
    pass


@dataclass(frozen=True)
class TopicLayout:
    """What a created topic gets. `grow`: the partitions were asked for, so existing topics with fewer
    are grown to them (a broker default grows nothing)."""

    partitions: int
    replication: int
    grow: bool


def service_topics(prefix: str = "") -> list[str]:
    """Every topic the services use: the event topics and their dead-letter topics."""
    topics = [f"{prefix}{t}" for t in ALL_TOPICS]
    return [*topics, *(dlq_topic(t) for t in topics)]


async def _start_admin(connection: KafkaConnection, timeout_s: float) -> AIOKafkaAdminClient:
    deadline = time.monotonic() + timeout_s
    while True:
        admin = AIOKafkaAdminClient(**connection.client_options(), request_timeout_ms=10_000)
        try:
            await admin.start()
            return admin
        except KafkaConnectionError as exc:
            await admin.close()
            await check_access(connection)  # refused credentials or certificate: raised at once
            if time.monotonic() > deadline:
                raise TopicSetupError(
                    f"Kafka at {connection.bootstrap} did not answer within {timeout_s:.0f}s ({exc}). "
                    "Start it (make up, or scripts/infra/kafka.sh start) or fix TREERAG_KAFKA_BOOTSTRAP "
                    f"(TREERAG_KAFKA_SECURITY_PROTOCOL={connection.security_protocol}: a listener of another "
                    "protocol closes the connection)."
                ) from exc
            await asyncio.sleep(1.0)


async def broker_defaults(admin: AIOKafkaAdminClient) -> tuple[int, int]:
    """(num.partitions, default.replication.factor) of one of the cluster's brokers."""
    unreadable = (f"set TREERAG_KAFKA_TOPIC_PARTITIONS and TREERAG_KAFKA_TOPIC_REPLICATION, so the "
                  f"broker's {BROKER_PARTITIONS} and {BROKER_REPLICATION} need not be read")
    try:
        brokers = (await admin.describe_cluster())["brokers"]
        resource = ConfigResource(ConfigResourceType.BROKER, str(brokers[0]["node_id"]),
                                  {BROKER_PARTITIONS: None, BROKER_REPLICATION: None})
        [response] = await admin.describe_configs([resource])
    except (KafkaError, IndexError) as exc:
        raise TopicSetupError(f"the broker's topic defaults could not be read ({exc!r}): {unreadable}") from exc
    [described] = response.to_object()["resources"]
    if described["error_code"]:
        raise TopicSetupError(
            f"the broker refused to describe its configuration (error {described['error_code']} "
            f"{described['error_message']}): {unreadable}"
        )
    values = {entry["config_names"]: entry["config_value"] for entry in described["config_entries"]}
    try:
        return int(values[BROKER_PARTITIONS]), int(values[BROKER_REPLICATION])
    except (KeyError, TypeError, ValueError) as exc:
        raise TopicSetupError(f"the broker did not give its topic defaults ({values}): {unreadable}") from exc


async def topic_layout(admin: AIOKafkaAdminClient, settings: Settings) -> TopicLayout:
    partitions, replication = settings.kafka_topic_partitions, settings.kafka_topic_replication
    if partitions is None or replication is None:
        default_partitions, default_replication = await broker_defaults(admin)
        return TopicLayout(partitions or default_partitions, replication or default_replication,
                           grow=partitions is not None)
    return TopicLayout(partitions, replication, grow=True)


async def ensure_topics(settings: Settings, topics: list[str] | None = None, timeout_s: float = 60.0) -> TopicLayout:
    """Create the missing topics (every service topic unless `topics` names some) with the layout the
    settings give; grow existing ones that have fewer partitions than asked for.

    A topic never shrinks (Kafka cannot), so a cluster set up with more partitions keeps them.
    """
    connection = kafka_connection(settings)
    names = topics if topics is not None else service_topics(settings.topic_prefix)
    admin = await _start_admin(connection, timeout_s)
    try:
        layout = await topic_layout(admin, settings)
        response = await admin.create_topics(
            [NewTopic(name, num_partitions=layout.partitions, replication_factor=layout.replication) for name in names]
        )
        refused = {}
        for entry in response.to_object()["topic_errors"]:
            if entry["error_code"] not in (0, TOPIC_ALREADY_EXISTS):
                refused[entry["topic"]] = entry
        described = await admin.describe_topics(names)
        existing = {t["topic"] for t in described if t["error_code"] == 0}
        for name, entry in refused.items():
            if not (entry["error_code"] in AUTHORIZATION_FAILED and name in existing):
                raise TopicSetupError(
                    f"Kafka refused to create topic {name!r} with {layout.partitions} partitions and "
                    f"{layout.replication} copies: error {entry['error_code']} {entry['error_message']} "
                    "(TREERAG_KAFKA_TOPIC_PARTITIONS, TREERAG_KAFKA_TOPIC_REPLICATION; or create the topics "
                    "beforehand, see docs/deploy.md)"
                )
        grow = {
            t["topic"]: NewPartitions(layout.partitions)
            for t in described
            if layout.grow and t["error_code"] == 0 and len(t["partitions"]) < layout.partitions
        }
        if grow:
            logger.info("adding partitions", extra={"fields": {"topics": sorted(grow), "partitions": layout.partitions}})
            await admin.create_partitions(grow)
    except KafkaError as exc:
        raise TopicSetupError(f"topic setup on {connection.bootstrap} failed: {exc!r}") from exc
    finally:
        await admin.close()
    return layout
