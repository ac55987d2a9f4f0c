"""A stage, declared as data: what it consumes, which handler takes each event, what it
produces and how it is delivered. The one runner (`shared.adapters.kafka.runner`) reads this
table; the stage's `main.py` only fills it in.

Handlers are built once the stage's ports exist (the store is connected), by the stage's
composition root: `build(ports) -> handlers`, then `routes(handlers)` names the handler of
each consumed event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from shared.model.delivery import Delivery, Failure
from shared.model.events import Event
from shared.ports.bus import Publisher
from shared.ports.ledger import DoneLedger
from shared.ports.queries import QueryStore
from shared.ports.repository import Repository
from shared.settings import Settings

E = TypeVar("E", bound=Event)
H = TypeVar("H")

Handler = Callable[[E, Delivery], Awaitable[None]]
GiveUp = Callable[[Failure], Awaitable[None]]


@dataclass(frozen=True)
class StagePorts:
    """What a stage's composition root gets to build its handlers from."""

    settings: Settings
    repository: Repository
    queries: QueryStore
    ledger: DoneLedger
    bus: Publisher


@dataclass(frozen=True)
class Route(Generic[E]):
    """One consumed event type and its handler.

    `give_up`: tells the user when the message is dead-lettered or expired (document or query
    failed), from the ids in a `Failure`; it never sees the message.
    `durable_attempts`: count every attempt in the store before handling (long messages, so a
    process death counts). `broadcast`: every replica reads every message, newest first and at
    most once (cache warming: a missed message only costs a later load).
    """

    consumes: type[E]
    handle: Handler[E]
    give_up: GiveUp | None = None
    durable_attempts: bool = False
    broadcast: bool = False
    max_poll_interval_ms: int = 5 * 60 * 1000


@dataclass(frozen=True)
class Stage(Generic[H]):
    name: str
    build: Callable[[StagePorts], Awaitable[H]]
    routes: Callable[[H], list[Route[Any]]]
    produces: tuple[type[Event], ...] = field(default_factory=tuple)
