#!/usr/bin/env python3
"""Smoke test for the local servers started by scripts/infra/{kafka,ferretdb}.sh.

Pytest-independent: run it with a python that has aiokafka and pymongo (faststream optional):

    $PYTHON scripts/infra/smoke.py [--kafka-only | --mongo-only]

Ports come from TREERAG_KAFKA_PORT (9092) and TREERAG_MONGO_PORT (27017).
Exit code 0 when every check passed; prints one line per check.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid

KAFKA = f"127.0.0.1:{os.environ.get('TREERAG_KAFKA_PORT', '9092')}"
MONGO = f"mongodb://127.0.0.1:{os.environ.get('TREERAG_MONGO_PORT', '27017')}/"

results: list[tuple[str, bool, str]] = []


async def check(name: str, coro) -> None:
    t0 = time.monotonic()
    try:
        detail = await asyncio.wait_for(coro, 60)
        results.append((name, True, detail or ""))
        print(f"PASS {name} ({time.monotonic() - t0:.2f}s) {detail or ''}", flush=True)
    except Exception as e:  # noqa: BLE001 - report everything
        results.append((name, False, repr(e)))
        print(f"FAIL {name} ({time.monotonic() - t0:.2f}s) {type(e).__name__}: {e}", flush=True)


# ---------------------------------------------------------------- Kafka
async def kafka_roundtrip() -> str:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topic = f"smoke-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=KAFKA)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=6, replication_factor=1)])
        desc = await admin.describe_topics([topic])
        nparts = len(desc[0]["partitions"])
        assert nparts == 6, f"expected 6 partitions, got {nparts}"
    finally:
        await admin.close()

    producer = AIOKafkaProducer(bootstrap_servers=KAFKA, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        sent = {}
        for p in range(6):
            md = await producer.send_and_wait(topic, f"msg-{p}".encode(), key=b"k", partition=p)
            sent[p] = md.offset
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=KAFKA, group_id=f"g-{topic}",
        auto_offset_reset="earliest", enable_auto_commit=False,
    )
    t0 = time.monotonic()
    await consumer.start()
    try:
        got = {}
        while len(got) < 6:
            batch = await consumer.getmany(timeout_ms=1000)
            for tp, msgs in batch.items():
                for m in msgs:
                    got[tp.partition] = m.value.decode()
        join_s = time.monotonic() - t0
        await consumer.commit()
        committed = await consumer.committed(next(iter(consumer.assignment())))
        assert committed == 1, committed
    finally:
        await consumer.stop()
    assert got == {p: f"msg-{p}" for p in range(6)}, got
    return f"topic={topic} 6 partitions, 6 msgs round-tripped, group join+fetch {join_s:.2f}s, commit ok"


async def kafka_autocreate() -> str:
    from aiokafka import AIOKafkaProducer

    topic = f"smoke-auto-{uuid.uuid4().hex[:8]}"
    producer = AIOKafkaProducer(bootstrap_servers=KAFKA)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"x")
        parts = producer.client.cluster.partitions_for_topic(topic)
    finally:
        await producer.stop()
    assert parts is not None and len(parts) == 6, parts
    return f"auto-created {topic} with {len(parts)} partitions"


async def faststream_roundtrip() -> str:
    try:
        from faststream.kafka import KafkaBroker
    except ImportError:
        return "skipped (faststream not installed)"
    from aiokafka.admin import AIOKafkaAdminClient
    from faststream.kafka import Topic

    # QUIRK (faststream 0.7.8): a subscriber creates its missing topics itself through
    # CreateTopics with Topic's default num_partitions=1, overriding the broker's
    # num.partitions=6. Pass Topic(name, num_partitions=N) (or create topics up front,
    # or KafkaBroker(allow_auto_create_topics=False)) so `--workers N` has partitions to split.
    topic = f"smoke-fs-{uuid.uuid4().hex[:8]}"
    broker = KafkaBroker(KAFKA, logger=None)
    got: asyncio.Future = asyncio.get_running_loop().create_future()

    @broker.subscriber(Topic(topic, num_partitions=6), group_id=f"g-{topic}", auto_offset_reset="earliest")
    async def handle(body: dict) -> None:
        if not got.done():
            got.set_result(body)

    async with broker:
        await broker.start()
        await broker.publish({"hello": "world"}, topic)
        body = await asyncio.wait_for(got, 30)
    assert body == {"hello": "world"}, body
    admin = AIOKafkaAdminClient(bootstrap_servers=KAFKA)
    await admin.start()
    try:
        nparts = len((await admin.describe_topics([topic]))[0]["partitions"])
    finally:
        await admin.close()
    assert nparts == 6, f"faststream created {topic} with {nparts} partitions"
    return f"faststream publish/subscribe ok, Topic(num_partitions=6) -> {nparts} partitions"


# ---------------------------------------------------------------- Mongo / FerretDB
async def mongo_crud() -> str:
    from pymongo import AsyncMongoClient
    from pymongo.errors import DuplicateKeyError

    client = AsyncMongoClient(MONGO, serverSelectionTimeoutMS=5000)
    db = client[f"smoke_{uuid.uuid4().hex[:8]}"]
    try:
        info = await client.admin.command("buildInfo")
        c = db.docs
        await c.create_index("doc_id", unique=True)
        await c.insert_one({"doc_id": "a", "n": 1, "tags": ["x", "y"]})
        await c.insert_many([{"doc_id": "b", "n": 2}, {"doc_id": "c", "n": 3}])
        try:
            await c.insert_one({"doc_id": "a", "n": 99})
            raise AssertionError("unique index not enforced")
        except DuplicateKeyError:
            pass
        doc = await c.find_one({"doc_id": "a"})
        assert doc["n"] == 1 and doc["tags"] == ["x", "y"], doc
        await c.update_one({"doc_id": "d"}, {"$set": {"n": 4}, "$inc": {"v": 1}}, upsert=True)
        n = await c.count_documents({"n": {"$gte": 2}})
        assert n == 3, n
        rows = [d async for d in await c.aggregate([{"$match": {}}, {"$group": {"_id": None, "s": {"$sum": "$n"}}}])]
        assert rows[0]["s"] == 10, rows
        return f"server={info.get('version')} ferretdb={info.get('ferretdbVersion', '-')}; insert/find/upsert/count/aggregate + unique index ok"
    finally:
        await client.drop_database(db.name)
        await client.close()


async def mongo_gridfs() -> str:
    from gridfs import AsyncGridFSBucket
    from pymongo import AsyncMongoClient

    client = AsyncMongoClient(MONGO, serverSelectionTimeoutMS=5000)
    db = client[f"smoke_{uuid.uuid4().hex[:8]}"]
    try:
        bucket = AsyncGridFSBucket(db, bucket_name="files")
        data = os.urandom(600 * 1024 + 123)  # > 2 chunks of 255 KiB
        fid = await bucket.upload_from_stream("blob.pdf", data, metadata={"k": "v"})
        stream = await bucket.open_download_stream(fid)
        back = await stream.read()
        assert back == data, "content mismatch"
        by_name = await (await bucket.open_download_stream_by_name("blob.pdf")).read()
        assert by_name == data
        names = [f.filename async for f in bucket.find({"metadata.k": "v"})]
        assert names == ["blob.pdf"], names
        await bucket.delete(fid)
        left = await db["files.chunks"].count_documents({})
        assert left == 0, left
        return f"GridFS put/get/get_by_name/find/delete of {len(data)} bytes ok"
    finally:
        await client.drop_database(db.name)
        await client.close()


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--kafka-only", action="store_true")
    g.add_argument("--mongo-only", action="store_true")
    args = ap.parse_args()
    if not args.mongo_only:
        print(f"# Kafka at {KAFKA}")
        await check("kafka: 6-partition produce/consume", kafka_roundtrip())
        await check("kafka: auto-create topic", kafka_autocreate())
        await check("kafka: faststream", faststream_roundtrip())
    if not args.kafka_only:
        print(f"# MongoDB wire protocol at {MONGO}")
        await check("mongo: crud + unique index", mongo_crud())
        await check("mongo: GridFS", mongo_gridfs())
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
