"""Liveness and readiness of a stage process, served beside its /metrics.

`/healthz` (liveness): the process' event loop still turns. A loop blocked for longer than
`stall_after_s` cannot consume, commit or send heartbeats, and only a restart frees it.
`/readyz` (readiness): the stage has started (store connected, topics set up, consumers
subscribed) and its last checks of Kafka and the store succeeded recently. An orchestrator sends
no traffic to a stage anyway (it pulls from Kafka), so readiness gates rollouts: a new replica
counts as available only once it can work.

The HTTP server runs in a thread and cannot await: an asyncio task (`run_health_checks`) ticks
and runs the checks every few seconds and the server reads the latest results.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from shared.adapters.logs import log_fields

logger = logging.getLogger(__name__)

Check = Callable[[], Awaitable[bool]]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

HEALTH_PATHS = ("/healthz", "/readyz")


class StageHealth:
    """What the checks last found; written by the event loop, read by the HTTP thread."""

    def __init__(self, stall_after_s: float = 60.0, stale_after_s: float = 30.0,
                 on_record: Callable[[Mapping[str, str]], None] | None = None) -> None:
        self.stall_after_s = stall_after_s
        self.stale_after_s = stale_after_s
        # Told every check's outcome (the stage runtime exports them as metrics).
        self.on_record = on_record
        self.started = False
        self.last_tick = time.monotonic()
        self.checks: dict[str, str] = {}
        self.checked_at: float | None = None

    def tick(self) -> None:
        self.last_tick = time.monotonic()

    def mark_started(self) -> None:
        self.started = True
        self.tick()

    def record(self, checks: Mapping[str, str]) -> None:
        self.checks = dict(checks)
        self.checked_at = time.monotonic()
        if self.on_record is not None:
            self.on_record(checks)
        self.tick()

    def liveness(self) -> tuple[bool, dict[str, Any]]:
        stalled_s = time.monotonic() - self.last_tick
        alive = stalled_s <= self.stall_after_s
        return alive, {"alive": alive, "loop_idle_s": round(stalled_s, 1)}

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        alive, _ = self.liveness()
        fresh = self.checked_at is not None and time.monotonic() - self.checked_at <= self.stale_after_s
        checks = dict(self.checks)
        if not self.started:
            checks["startup"] = "not finished"
        if not fresh:
            checks["checks"] = "no recent result"
        ready = alive and self.started and fresh and all(v == "ok" for v in self.checks.values())
        return ready, {"ready": ready, "checks": checks}


async def run_checks(checks: Mapping[str, Check], timeout_s: float) -> dict[str, str]:
    """Every check once: "ok", "unreachable" or the error it raised."""
    results: dict[str, str] = {}
    for name, check in checks.items():
        try:
            results[name] = "ok" if await asyncio.wait_for(check(), timeout_s) else "unreachable"
        except Exception as exc:  # a failing dependency is a result, not a crash
            results[name] = f"unreachable: {exc!r}"
    return results


async def run_health_checks(
    health: StageHealth, checks: Mapping[str, Check], interval_s: float = 5.0, timeout_s: float = 3.0
) -> None:
    """Check every `interval_s` until cancelled; a change of outcome is logged once."""
    previous: dict[str, str] = {}
    while True:
        results = await run_checks(checks, timeout_s)
        health.record(results)
        if results != previous and any(v != "ok" for v in results.values()):
            logger.warning("not ready", extra=log_fields(checks=results))
        elif results != previous and previous:
            logger.info("ready again", extra=log_fields(checks=results))
        previous = results
        await asyncio.sleep(interval_s)


def with_health(app: WsgiApp, health: StageHealth) -> WsgiApp:
    """`app` (the metrics exposition) with /healthz and /readyz answered from `health`."""

    def routed(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path not in HEALTH_PATHS:
            return app(environ, start_response)
        ok, body = health.liveness() if path == "/healthz" else health.readiness()
        payload = json.dumps(body).encode()
        status = "200 OK" if ok else "503 Service Unavailable"
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]

    return routed
