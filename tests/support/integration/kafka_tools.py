"""Reading and writing the test topics directly, as another producer or an auditor would, connected
as the services connect (`kafka_connection`)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from shared.adapters.kafka.connection import kafka_connection
from shared.adapters.mongo.document_keys import COLLECTION as DOCUMENT_KEYS
from shared.adapters.sealing import EventSealer
from shared.model.events import Event
from shared.settings import Settings

E = TypeVar("E", bound=Event)


def _client_options(bootstrap: str) -> dict[str, Any]:
    return kafka_connection(Settings(kafka_bootstrap=bootstrap)).client_options()


async def publish(bootstrap: str, topic: str, payload: bytes, key: str) -> None:
    producer = AIOKafkaProducer(**_client_options(bootstrap), acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, payload, key=key.encode())
    finally:
        await producer.stop()


async def publish_event(bootstrap: str, prefix: str, event: Event) -> None:
    await publish(bootstrap, f"{prefix}{event.TOPIC}", event.model_dump_json().encode(), event.key)


async def read_topic(bootstrap: str, topic: str) -> list[ConsumerRecord[bytes, bytes]]:
    """Every message currently in `topic`, from the beginning, without joining a group."""
    consumer = AIOKafkaConsumer(**_client_options(bootstrap), group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in (consumer.partitions_for_topic(topic) or set())]
        if not partitions:
            await consumer._client.force_metadata_update()  # a topic created after start()
            partitions = [TopicPartition(topic, p) for p in (consumer.partitions_for_topic(topic) or set())]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        records: list[ConsumerRecord[bytes, bytes]] = []
        deadline = time.monotonic() + 30
        while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
            if time.monotonic() > deadline:
                raise AssertionError(f"could not read {topic} to its end within 30 s")
            batch = await consumer.getmany(timeout_ms=500)
            for messages in batch.values():
                records.extend(messages)
        return records
    finally:
        await consumer.stop()


async def wait_for_key(bootstrap: str, topic: str, key: str, timeout_s: float = 60) -> list[ConsumerRecord[bytes, bytes]]:
    deadline = time.monotonic() + timeout_s
    while True:
        found = [r for r in await read_topic(bootstrap, topic) if r.key == key.encode()]
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.5)


class StoredKeys:
    """The document keys as the store holds them now (read by a test, not by a stage)."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def keys_for(self, doc_ids: Any, *, create: bool) -> dict[str, bytes]:
        rows = self.db[DOCUMENT_KEYS].find({"_id": {"$in": list(doc_ids)}})
        return {row["_id"]: bytes(row["key"]) for row in rows}

    async def destroy(self, doc_id: str) -> None:
        raise AssertionError("a test never destroys a key")


async def opened(db: Any, kind: type[E], value: bytes) -> E:
    """A retained message as the next stage reads it: its document text opened with the
    store's keys (`TextErased` once a document it comes from is deleted)."""
    return await EventSealer(StoredKeys(db)).open(kind.model_validate_json(value))
