"""The gateway knows which stages a query needs have a live process, from their heartbeats,
reading them at most every check interval and never refusing on heartbeats it could not read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from services.gateway.stage_watch import QUERY_STAGES, LiveStages


@dataclass
class Beat:
    stage: str


class Beats:
    def __init__(self, stages: list[str]) -> None:
        self.stages = stages
        self.reads = 0
        self.down = False

    async def seen_since(self, since: datetime) -> list[Beat]:
        self.reads += 1
        if self.down:
            raise ConnectionError("store unreachable")
        return [Beat(stage) for stage in self.stages]


async def test_the_stages_without_a_heartbeat_are_named_in_query_order() -> None:
    now = [0.0]
    beats = Beats(["compressor"])
    live = LiveStages(beats, ttl_s=10, check_every_s=0.5, clock=lambda: now[0])  # type: ignore[arg-type]
    assert await live.missing() == ["navigator", "verifier"]
    beats.stages = list(QUERY_STAGES)
    assert await live.missing() == ["navigator", "verifier"]  # read again only after the interval
    assert beats.reads == 1
    now[0] = 0.5
    assert await live.missing() == [] and beats.reads == 2


async def test_heartbeats_that_cannot_be_read_refuse_nothing() -> None:
    beats = Beats([])
    beats.down = True
    assert await LiveStages(beats, ttl_s=10).missing() == []  # type: ignore[arg-type]
