"""Every stage process answers the probes a Kubernetes deployment sends (deploy/k8s): /healthz
and /readyz on its metrics port, ready once it consumes with Kafka and the store answering."""

from __future__ import annotations

import httpx
import pytest

from tests.support.integration.stack import ServiceProcess, wait_until

pytestmark = pytest.mark.integration


def test_every_stage_is_live_and_ready_on_its_metrics_port(
    query_stages: list[ServiceProcess], indexer: ServiceProcess
) -> None:
    for process in (*query_stages, indexer):
        base = f"http://127.0.0.1:{process.metrics_port}"
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200, process.name

        def ready(base: str = base) -> bool:
            return httpx.get(f"{base}/readyz", timeout=5).status_code == 200

        wait_until(ready, 60, f"{process.name} /readyz", interval_s=0.5)
        checks = httpx.get(f"{base}/readyz", timeout=5).json()["checks"]
        assert checks == {"kafka": "ok", "mongodb": "ok"}, process.name
