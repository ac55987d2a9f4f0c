"""Publishing that survives a broker outage: the transactional outbox.

A caller records the event it owes (`stage`) in the store before the write that needs it, then
tries to publish it at once (`send`, bounded by `send_timeout_s`: a dead broker costs the client
seconds, not the producer's 40 s). Published, the entry is removed; not published, it waits for
the relay, which every `interval_s` publishes the entries that are due, so an accepted upload is
indexed once the broker is back with no client action. An event can go out twice (a timeout
that still reached the broker, a process that died before removing the entry); consumers skip
an event id they already handled.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from shared.model.clock import utc_now
from shared.model.events import DOCUMENT_EVENTS, QUERY_EVENTS, Event
from shared.model.outbox import OutboxEntry
from shared.ports.bus import Publisher
from shared.ports.outbox import Outbox

logger = logging.getLogger(__name__)

EVENT_TYPES: dict[str, type[Event]] = {e.TOPIC: e for e in (*DOCUMENT_EVENTS, *QUERY_EVENTS)}


class OutboxPublisher:
    """A `Publisher` that never loses an event it accepted, and never blocks for long.

    `grace_s`: how long a staged entry is left to its own `send` before the relay takes it
    (so a process that died between the two still gets its event published).
    `claim_s`: how long a relay's claim keeps other relays off an entry.
    """

    def __init__(
        self,
        outbox: Outbox,
        publisher: Publisher,
        *,
        send_timeout_s: float = 2.0,
        grace_s: float = 30.0,
        claim_s: float = 30.0,
        max_retry_s: float = 10.0,
    ) -> None:
        self.outbox = outbox
        self.publisher = publisher
        self.send_timeout_s = send_timeout_s
        self.grace_s = grace_s
        self.claim_s = claim_s
        self.max_retry_s = max_retry_s

    async def stage(self, event: Event) -> None:
        """Record that `event` is owed. Call before the store write that needs it."""
        now = utc_now()
        await self.outbox.add(OutboxEntry(
            entry_id=event.event_id, topic=event.TOPIC, key=event.key, payload=event.model_dump_json(),
            created_at=now, due_at=now + timedelta(seconds=self.grace_s),
        ))

    async def send(self, event: Event) -> bool:
        """Publish a staged event now; False when the broker did not take it in time (the relay
        will publish it)."""
        if await self._publish(event):
            await self.outbox.remove(event.event_id)
            return True
        await self.outbox.reschedule(event.event_id, utc_now())
        return False

    async def publish(self, event: Event) -> None:
        """`stage` and `send`: returns once the event is owed durably, published or not."""
        await self.stage(event)
        await self.send(event)

    async def discard(self, key: str) -> int:
        return await self.outbox.discard(key)

    async def _publish(self, event: Event) -> bool:
        try:
            await asyncio.wait_for(self.publisher.publish(event), self.send_timeout_s)
        except Exception as exc:  # TimeoutError or the broker's own error: the relay retries
            logger.warning("publish deferred to the outbox relay",
                           extra={"fields": {"topic": event.TOPIC, "key": event.key, "error": repr(exc)[:200]}})
            return False
        return True

    async def relay_once(self, limit: int = 100) -> int:
        """Publish the entries that are due; stops at the first failure (the broker is down:
        the others would fail the same way). Returns how many were published."""
        now = utc_now()
        entries = await self.outbox.claim_due(now, now + timedelta(seconds=self.claim_s), limit)
        published = 0
        for position, entry in enumerate(entries):
            event_type = EVENT_TYPES.get(entry.topic)
            if event_type is None:
                logger.error("outbox entry of an unknown topic dropped", extra={"fields": {"topic": entry.topic}})
                await self.outbox.remove(entry.entry_id)
                continue
            if not await self._publish(event_type.model_validate_json(entry.payload)):
                retry_at = utc_now() + timedelta(seconds=min(self.max_retry_s, 2.0 ** min(entry.attempts, 8)))
                for unsent in entries[position:]:
                    await self.outbox.reschedule(unsent.entry_id, retry_at)
                break
            await self.outbox.remove(entry.entry_id)
            published += 1
        if published:
            logger.info("outbox relayed", extra={"fields": {"published": published}})
        return published

    async def run_relay(self, interval_s: float = 1.0) -> None:
        """`relay_once` every `interval_s` until cancelled; a store outage is logged and waited out."""
        while True:
            try:
                await self.relay_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("outbox relay round failed", extra={"fields": {"error": repr(exc)[:200]}})
            await asyncio.sleep(interval_s)
