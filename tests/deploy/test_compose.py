"""docker-compose.yml: the same system with the official images, every stage scalable."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.adapters.metrics import STAGE_METRICS_PORTS

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
STAGES = ("indexer", "navigator", "compressor", "verifier")


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_runs_every_service_on_the_official_images() -> None:
    services = compose()["services"]
    assert services["kafka"]["image"].startswith("apache/kafka:")
    assert services["mongo"]["image"].startswith("mongo:")
    for name in (*STAGES, "gateway"):
        service = services[name]
        assert service["build"]["dockerfile"] == "deploy/docker/Dockerfile"
        assert service["build"]["args"]["STAGE"] == name  # each stage's image holds only its own code
        assert (REPO / service["build"]["dockerfile"]).is_file()
        module = service["command"][service["command"].index("-m") + 1]
        assert module == f"services.{name}"
        assert (REPO / "services" / name / "__main__.py").is_file()
        env = service["environment"]
        assert env["TREERAG_KAFKA_BOOTSTRAP"] == "kafka:9092"
        assert env["TREERAG_MONGO_URL"].startswith("mongodb://mongo:27017")
        assert set(service["depends_on"]) >= {"kafka", "mongo"}


def test_every_stage_can_be_scaled() -> None:
    services = compose()["services"]
    for name in STAGES:
        service = services[name]
        # A fixed container name or host port would make `--scale NAME=3` fail.
        assert "container_name" not in service, name
        assert "ports" not in service, name
        assert service["environment"]["TREERAG_METRICS_PORT"] == str(STAGE_METRICS_PORTS[name])
    gateway = services["gateway"]
    assert "container_name" not in gateway
    assert all("-" in str(p).split(":")[-2] for p in gateway["ports"]), "gateway replicas need a host port range"
    assert int(services["indexer"]["environment"]["TREERAG_KAFKA_TOPIC_PARTITIONS"]) >= 3


def test_docker_compose_config_accepts_the_file() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("docker is not installed; the YAML structure is checked by the tests above")
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("the docker compose plugin is not installed (`docker compose version` failed)")
    result = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "--quiet"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    scaled = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "--services"], cwd=REPO, capture_output=True, text=True
    )
    assert set(STAGES) <= set(scaled.stdout.split())


def test_only_the_gateway_is_published_and_only_on_the_hosts_loopback() -> None:
    services = compose()["services"]
    published = {name: service.get("ports", []) for name, service in services.items() if service.get("ports")}
    assert set(published) <= {"gateway", "prometheus", "grafana"}, published
    for name, ports in published.items():
        for port in ports:
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"
    gateway_env = services["gateway"]["environment"]
    assert "gateway" in gateway_env["TREERAG_ALLOWED_HOSTS"]  # Prometheus scrapes it by that name
    assert gateway_env["TREERAG_CORS_ORIGINS"] == "${TREERAG_CORS_ORIGINS:-}"


def test_every_stage_is_probed_on_its_own_readiness_endpoint() -> None:
    services = compose()["services"]
    for name in STAGES:
        check = services[name].get("healthcheck")
        assert check is not None, f"{name} has no healthcheck"
        probe = " ".join(check["test"])
        assert f"http://127.0.0.1:{STAGE_METRICS_PORTS[name]}/readyz" in probe, probe
        assert services[name]["environment"]["TREERAG_METRICS_PORT"] == str(STAGE_METRICS_PORTS[name])
