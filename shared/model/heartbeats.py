"""A stage process's heartbeat: it is alive and its event loop turning (see
shared/adapters/mongo/heartbeats.py for how they are kept)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class Heartbeat(BaseModel):
    stage: str
    instance: str
    seen_at: datetime
    partitions: int
