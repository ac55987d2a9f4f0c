"""What a handler needs of the bus: publishing events. Kafka implements it in the services;
tests and the one-process engine use in-memory publishers."""

from __future__ import annotations

from typing import Protocol

from shared.model.events import Event


class Publisher(Protocol):
    async def publish(self, event: Event) -> None:
        """Returns once the event is durably written (a handler publishes before it returns)."""
        ...


class RawPublisher(Protocol):
    async def publish_raw(self, topic: str, payload: bytes, key: str | None) -> None:
        """Bytes as they are, to a topic by name (dead letters keep the original message)."""
        ...
