"""What the gateway runs on: its ports (the store, the query store, the outbox, the keys, the
heartbeats, the bus) and the services it builds on them. `bootstrap.py` makes one from settings;
tests make one from the fakes of the same ports. Routes receive it through `Depends(gateway)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, FastAPI, Request

from services.gateway.answers import AnswerWaiter
from services.gateway.deletions import BackgroundDeletions
from services.gateway.outages import BackendUnavailable
from services.gateway.progress import ProgressHub
from services.gateway.schemas import QUERY_TIMEOUT_MAX_S
from services.gateway.stage_watch import LiveStages
from services.gateway.store import GatewayStore
from services.gateway.withdrawn import RecentDeletions
from shared.app.outbox import OutboxPublisher
from shared.ports.api_keys import KeyStore
from shared.ports.bus import Publisher
from shared.ports.chats import ChatStore
from shared.ports.document_keys import DocumentKeys
from shared.ports.heartbeats import HeartbeatReader
from shared.ports.model_roles import FollowUpWriter
from shared.ports.queries import QueryStore
from shared.settings import Settings


@dataclass(frozen=True)
class Gateway:
    settings: Settings
    documents: GatewayStore
    queries: QueryStore
    chats: ChatStore
    outbox: OutboxPublisher  # document events: never lost to a Kafka outage
    keys: KeyStore  # looked up per request; admins manage their tenant's (routes/keys.py)
    heartbeats: HeartbeatReader
    bus: Publisher  # queries: published at once, or refused (their client is waiting)
    ping_kafka: Callable[[float], Awaitable[bool]]  # within a timeout in seconds
    waiter: AnswerWaiter
    deletions: BackgroundDeletions
    stages: LiveStages
    follow_ups: FollowUpWriter | None = None  # the configured model, when there is one
    document_keys: DocumentKeys | None = None  # what seals document text on the bus (destroyed on delete)
    progress: ProgressHub = field(default_factory=ProgressHub)  # the streamed queries' progress
    # Documents deleted lately: an answer citing one is not served (services/gateway/withdrawn.py).
    deleted: RecentDeletions = field(default_factory=lambda: RecentDeletions(QUERY_TIMEOUT_MAX_S))

def live(app: FastAPI) -> Gateway:
    """The gateway `app` serves, once its backends are connected; 503 "starting" before."""
    gateway: Gateway | None = getattr(app.state, "gateway", None)
    if gateway is None:
        raise BackendUnavailable("the gateway", "is starting")
    return gateway


async def running(request: Request) -> Gateway:
    # async: a plain function would run on a worker thread for every request.
    return live(request.app)


GatewayDep = Annotated[Gateway, Depends(running)]
