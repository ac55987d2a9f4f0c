"""The outbox publisher: an event accepted while the broker is down is published by the relay
once the broker is back, and the caller never waits longer than the send timeout."""

from __future__ import annotations

import asyncio
import time

from shared.app.outbox import OutboxPublisher
from shared.model.events import DocumentUploaded, Event
from tests.support.fakes import FakeOutbox


class Broker:
    """Takes events while up; while down, hangs as a producer waiting for metadata does."""

    def __init__(self) -> None:
        self.up = True
        self.received: list[Event] = []

    async def publish(self, event: Event) -> None:
        if not self.up:
            await asyncio.sleep(3600)
        self.received.append(event)


def uploaded(doc_id: str) -> DocumentUploaded:
    return DocumentUploaded(doc_id=doc_id, file_name=f"{doc_id}.pdf", size_bytes=1, pdf_ref=f"gridfs:{doc_id}")


async def test_event_owed_during_an_outage_is_published_by_the_relay_once_the_broker_is_back() -> None:
    outbox, broker = FakeOutbox(), Broker()
    publisher = OutboxPublisher(outbox, broker, send_timeout_s=0.2, max_retry_s=0.0)

    broker.up = False
    started = time.monotonic()
    await publisher.publish(uploaded("a1"))
    assert time.monotonic() - started < 1.0
    assert await outbox.pending() == 1 and broker.received == []
    assert await publisher.relay_once() == 0  # still down: kept

    broker.up = True
    await asyncio.sleep(0.01)
    assert await publisher.relay_once() == 1
    assert [e.key for e in broker.received] == ["a1"]
    assert await outbox.pending() == 0
    assert await publisher.relay_once() == 0  # published once


async def test_published_event_leaves_nothing_owed_and_a_deleted_document_is_not_published() -> None:
    outbox, broker = FakeOutbox(), Broker()
    publisher = OutboxPublisher(outbox, broker, send_timeout_s=0.2, max_retry_s=0.0)
    await publisher.publish(uploaded("b1"))
    assert await outbox.pending() == 0 and len(broker.received) == 1

    broker.up = False
    await publisher.publish(uploaded("b2"))
    assert await publisher.discard("b2") == 1
    broker.up = True
    assert await publisher.relay_once() == 0
    assert [e.key for e in broker.received] == ["b1"]


async def test_entry_staged_by_a_process_that_died_before_sending_is_published_after_the_grace() -> None:
    outbox, broker = FakeOutbox(), Broker()
    publisher = OutboxPublisher(outbox, broker, send_timeout_s=0.2, grace_s=0.05)
    await publisher.stage(uploaded("c1"))  # no send: the process died here
    assert await publisher.relay_once() == 0  # its own send may still be on the way
    await asyncio.sleep(0.06)
    assert await publisher.relay_once() == 1 and [e.key for e in broker.received] == ["c1"]
