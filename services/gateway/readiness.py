"""/readyz: the gateway's own backends and every required stage's liveness, in one JSON body.

A stage is alive while one of its processes has written a heartbeat within TREERAG_HEARTBEAT_TTL_S
(shared.adapters.mongo.heartbeats); the stages required are TREERAG_READY_STAGES. Not ready
(503) names what is missing, so an operator sees which process to look at.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from shared.model.clock import utc_now
from shared.ports.heartbeats import HeartbeatReader
from shared.settings import Settings

CHECK_TIMEOUT_S = 3.0


def required_stages(settings: Settings) -> list[str]:
    return [stage.strip() for stage in settings.ready_stages.split(",") if stage.strip()]


async def _check(probe: Callable[[], Awaitable[Any]]) -> str:
    try:
        result = await asyncio.wait_for(probe(), CHECK_TIMEOUT_S)
    except Exception as exc:
        return f"unreachable: {type(exc).__name__}"
    return "ok" if result is not False else "unreachable"


async def readiness(settings: Settings, ping_store: Callable[[], Awaitable[Any]],
                    ping_kafka: Callable[[], Awaitable[bool]],
                    heartbeats: HeartbeatReader | None) -> tuple[bool, dict[str, Any]]:
    """(ready, body): body = {"ready", "checks": {mongodb, kafka}, "stages": {stage: {"alive",
    "instances"}}, "missing": [what is not there]}."""
    checks = dict(zip(("mongodb", "kafka"), await asyncio.gather(_check(ping_store), _check(ping_kafka)), strict=True))
    stages: dict[str, dict[str, Any]] = {stage: {"alive": False, "instances": []} for stage in required_stages(settings)}
    if heartbeats is not None and checks["mongodb"] == "ok":
        since = utc_now() - timedelta(seconds=settings.heartbeat_ttl_s)
        try:
            beats = await asyncio.wait_for(heartbeats.seen_since(since), CHECK_TIMEOUT_S)
        except Exception as exc:
            checks["heartbeats"] = f"unreadable: {type(exc).__name__}"
            beats = []
        for beat in beats:
            entry = stages.setdefault(beat.stage, {"alive": False, "instances": []})
            entry["alive"] = True
            entry["instances"].append({"instance": beat.instance, "seen_at": beat.seen_at.isoformat(),
                                       "partitions": beat.partitions})
    missing = [name for name, state in checks.items() if state != "ok"]
    missing += [f"stage {stage}" for stage in required_stages(settings) if not stages[stage]["alive"]]
    return not missing, {"ready": not missing, "checks": checks, "stages": stages, "missing": missing}
