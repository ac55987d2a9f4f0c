"""A bus inside one process: published events go to the handlers the stages' routes declare,
in publication order, with the same `Delivery` a Kafka consumer would give them."""

from __future__ import annotations

from collections import deque
from typing import Any

from shared.model.delivery import Delivery
from shared.model.events import Event
from shared.stage import Route


class InMemoryBus:
    def __init__(self, name: str = "in-process") -> None:
        self.name = name
        self.published: list[Event] = []
        self._routes: dict[str, list[tuple[str, Route[Any]]]] = {}
        self._queue: deque[Event] = deque()
        self._offsets: dict[str, int] = {}

    def attach(self, stage: str, routes: list[Route[Any]]) -> None:
        """Deliver each route's event type to its handler, as the Kafka runner would."""
        for route in routes:
            self._routes.setdefault(route.consumes.TOPIC, []).append((stage, route))

    async def publish(self, event: Event) -> None:
        if not event.producer:
            event.producer = self.name
        self.published.append(event)
        self._queue.append(event)

    async def drain(self) -> None:
        """Handle every queued event, and those its handlers publish, until none is left.
        A handler's exception propagates to the caller (there is nobody to retry for)."""
        while self._queue:
            event = self._queue.popleft()
            offset = self._offsets[event.TOPIC] = self._offsets.get(event.TOPIC, -1) + 1
            for stage, route in self._routes.get(event.TOPIC, []):
                delivery = Delivery(stage=stage, topic=event.TOPIC, partition=0, offset=offset, attempt=1,
                                    queued_ms=0.0)
                await route.handle(event, delivery)
