"""A stage's /healthz and /readyz, served beside its /metrics: what a kubelet's probes see."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from shared.adapters.health import StageHealth, run_health_checks
from shared.adapters.metrics import record_backend_checks, start_metrics_server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served() -> tuple[StageHealth, str]:
    health = StageHealth(stall_after_s=0.5, stale_after_s=0.5)
    port = free_port()
    assert start_metrics_server(port, addr="127.0.0.1", health=health)
    return health, f"http://127.0.0.1:{port}"


def test_a_stage_is_alive_at_once_and_ready_only_once_started_with_its_checks_passing(
    served: tuple[StageHealth, str],
) -> None:
    health, url = served
    assert httpx.get(f"{url}/healthz").status_code == 200
    before = httpx.get(f"{url}/readyz")
    assert before.status_code == 503
    assert before.json()["checks"]["startup"] == "not finished"
    health.mark_started()
    health.record({"kafka": "ok", "mongodb": "ok"})
    ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    health.record({"kafka": "ok", "mongodb": "unreachable: ServerSelectionTimeoutError()"})
    failing = httpx.get(f"{url}/readyz")
    assert failing.status_code == 503
    assert failing.json()["checks"]["mongodb"].startswith("unreachable")
    # /metrics is still served on the same port.
    assert "treerag_pages_indexed_total" in httpx.get(f"{url}/metrics").text


def test_a_stalled_loop_fails_liveness_and_stale_checks_fail_readiness(served: tuple[StageHealth, str]) -> None:
    health, url = served
    health.mark_started()
    health.record({"kafka": "ok"})
    health.last_tick -= 1.0  # the loop has not turned for longer than stall_after_s
    health.checked_at = (health.checked_at or 0.0) - 1.0
    assert httpx.get(f"{url}/healthz").status_code == 503
    readiness = httpx.get(f"{url}/readyz")
    assert readiness.status_code == 503
    assert readiness.json()["checks"]["checks"] == "no recent result"


async def test_the_checks_run_in_the_loop_and_a_raising_check_is_a_failed_check() -> None:
    health = StageHealth()
    health.mark_started()

    async def answers() -> bool:
        return True

    async def refuses() -> bool:
        raise ConnectionRefusedError("broker down")

    task = asyncio.create_task(run_health_checks(health, {"kafka": refuses, "mongodb": answers}, interval_s=0.05))
    try:
        for _ in range(100):
            if health.checks:
                break
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
    assert health.checks["mongodb"] == "ok"
    assert health.checks["kafka"].startswith("unreachable") and "broker down" in health.checks["kafka"]
    assert health.readiness()[0] is False


def test_each_backend_check_is_a_gauge_the_unreachable_alerts_read(served: tuple[StageHealth, str]) -> None:
    health, url = served
    health.on_record = record_backend_checks  # as the stage runtime builds it
    health.record({"kafka": "unreachable: KafkaConnectionError()", "mongodb": "ok"})
    exposed = httpx.get(f"{url}/metrics").text
    assert 'treerag_backend_up{backend="kafka"} 0.0' in exposed
    assert 'treerag_backend_up{backend="mongodb"} 1.0' in exposed
    health.record({"kafka": "ok", "mongodb": "ok"})
    assert 'treerag_backend_up{backend="kafka"} 1.0' in httpx.get(f"{url}/metrics").text
