"""Reading the stages' heartbeats: which processes were alive recently (the gateway's /readyz
and its refusal of a query no live stage would answer)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from shared.model.heartbeats import Heartbeat


class HeartbeatReader(Protocol):
    async def seen_since(self, since: datetime) -> list[Heartbeat]: ...
