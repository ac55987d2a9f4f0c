"""Consumer lag read from a real Kafka broker: end offset minus what the group has committed."""

from __future__ import annotations

import uuid

import pytest

from shared.adapters.metrics import CONSUMER_LAG, record_consumer_lag

pytestmark = pytest.mark.integration


def exported_lag() -> dict[str, float]:
    return {
        sample.labels["partition"]: sample.value
        for family in CONSUMER_LAG.collect()
        for sample in family.samples
        if sample.labels["stage"] == "lagtest"
    }


async def test_lag_counts_uncommitted_messages_per_partition(infra) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.structs import OffsetAndMetadata

    bootstrap = infra.kafka_bootstrap
    topic = f"test.lag.{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=f"lag-{topic}", enable_auto_commit=False)
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    try:
        await producer.start()
        for _ in range(5):
            await producer.send_and_wait(topic, b"x", partition=0)
        for _ in range(3):
            await producer.send_and_wait(topic, b"x", partition=1)
        await consumer.start()
        consumer.assign([p0, p1])
        await consumer.commit({p0: OffsetAndMetadata(2, "")})

        readings = await record_consumer_lag("lagtest", consumer)

        # Partition 1 has no commit yet: all of its 3 messages are still to be processed.
        assert readings == {(topic, 0): 3, (topic, 1): 3}
        assert exported_lag() == {"0": 3, "1": 3}

        await consumer.commit({p0: OffsetAndMetadata(5, ""), p1: OffsetAndMetadata(3, "")})
        assert await record_consumer_lag("lagtest", consumer) == {(topic, 0): 0, (topic, 1): 0}

        # After a rebalance takes partition 1 away, its series is no longer exported here.
        consumer.assign([p0])
        await record_consumer_lag("lagtest", consumer)
        assert exported_lag() == {"0": 0}
    finally:
        await consumer.stop()
        await producer.stop()
        await admin.delete_topics([topic])
        await admin.close()
