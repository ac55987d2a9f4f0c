"""The Kubernetes manifests (deploy/k8s), rendered by kustomize and checked offline.

Every object is validated against the Kubernetes API's schemas bundled in `kubernetes-validate`
(strict: an unknown field is an error) and KEDA's ScaledObject against the schema in
deploy/k8s/schemas. Then what running them needs: every stage scales on the lag of the consumer
group and topic it really consumes, never beyond the topic's partitions; every container is
probed on /healthz and /readyz, has requests and limits, and a PodDisruptionBudget covers it;
the memory it gets is above what the bus benchmark measured.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
KUSTOMIZATIONS = ("base", "overlays/example")
KUBERNETES_VERSION = "1.33.0"
STAGES = ("indexer", "navigator", "compressor", "verifier")
SCALED_OBJECT_SCHEMA = K8S / "schemas" / "scaledobject-keda-v1alpha1.json"
BUS_COST = REPO / "bench" / "results" / "bus_cost.json"

Manifest = dict[str, Any]


def kustomize_binary() -> str:
    configured = os.environ.get("TREERAG_KUSTOMIZE")
    if configured:
        return configured
    built = subprocess.run(
        ["bash", str(REPO / "scripts" / "infra" / "kustomize.sh"), "path"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not Path(built).is_file():
        pytest.fail(f"kustomize is not built at {built}: run `make infra` (or scripts/infra/kustomize.sh build)")
    return built


@cache
def rendered(kustomization: str) -> list[Manifest]:
    result = subprocess.run(
        [kustomize_binary(), "build", str(K8S / kustomization)], capture_output=True, text=True
    )
    assert result.returncode == 0, f"kustomize build {kustomization} failed:\n{result.stderr}"
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def of_kind(manifests: list[Manifest], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def settings_of(manifests: list[Manifest]) -> dict[str, str]:
    maps = [m for name, m in of_kind(manifests, "ConfigMap").items() if name.startswith("treerag-settings")]
    assert len(maps) == 1, "exactly one treerag-settings ConfigMap"
    return maps[0]["data"]


class _AnyHandlers:
    """Stands in for a stage's handlers: only the routes' consumed events are read here."""

    max_poll_interval_s = 1800.0

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


def consumed_topic(stage: str) -> str:
    """The topic a stage consumes in its own consumer group (broadcast routes have none)."""
    declared = importlib.import_module(f"services.{stage}.main").STAGE
    grouped = [route.consumes.TOPIC for route in declared.routes(_AnyHandlers()) if not route.broadcast]
    assert len(grouped) == 1, f"{stage} consumes {grouped} in its group; one ScaledObject trigger each"
    return grouped[0]


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_every_object_is_valid_for_the_api_server(kustomization: str) -> None:
    scaled_object = json.loads(SCALED_OBJECT_SCHEMA.read_text())
    errors = []
    for manifest in rendered(kustomization):
        name = f"{manifest['kind']}/{manifest['metadata']['name']}"
        try:
            if manifest["kind"] == "ScaledObject":
                jsonschema.validate(manifest, scaled_object)
            else:
                kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
        except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as exc:
            errors.append(f"{name}: {exc.message}")
    assert not errors, "\n".join(errors)


def test_the_validation_rejects_a_broken_scaled_object() -> None:
    """The schemas catch what the API server or KEDA would refuse."""
    scaled = of_kind(rendered("base"), "ScaledObject")["treerag-indexer"]
    schema = json.loads(SCALED_OBJECT_SCHEMA.read_text())
    no_topic = json.loads(json.dumps(scaled))
    del no_topic["spec"]["triggers"][0]["metadata"]["topic"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(no_topic, schema)
    typo = json.loads(json.dumps(scaled))
    typo["spec"]["maxReplicas"] = typo["spec"].pop("maxReplicaCount")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(typo, schema)
    deployment = json.loads(json.dumps(of_kind(rendered("base"), "Deployment")["treerag-indexer"]))
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessprobe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_every_stage_scales_on_its_consumer_lag_within_the_partitions(kustomization: str) -> None:
    manifests = rendered(kustomization)
    settings = settings_of(manifests)
    # Unset, the topics would get the broker's num.partitions: the replica caps need the number.
    assert "TREERAG_KAFKA_TOPIC_PARTITIONS" in settings, "the manifests must set the partitions the caps rely on"
    partitions = int(settings["TREERAG_KAFKA_TOPIC_PARTITIONS"])
    prefix = settings.get("TREERAG_TOPIC_PREFIX", "")
    scaled = of_kind(manifests, "ScaledObject")
    deployments = of_kind(manifests, "Deployment")
    for stage in STAGES:
        name = f"treerag-{stage}"
        assert name in scaled, f"{stage} has no ScaledObject"
        spec = scaled[name]["spec"]
        assert spec["scaleTargetRef"]["name"] == name and name in deployments
        assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"] <= partitions, (
            f"{stage}: replicas {spec['minReplicaCount']}..{spec['maxReplicaCount']} with {partitions} partitions"
        )
        [trigger] = spec["triggers"]
        assert trigger["type"] == "kafka"
        assert trigger["metadata"]["topic"] == prefix + consumed_topic(stage)
        assert trigger["metadata"]["consumerGroup"] == f"{prefix}treerag-{stage}"
        assert trigger["metadata"]["bootstrapServers"] == settings["TREERAG_KAFKA_BOOTSTRAP"]
        assert trigger["metadata"].get("allowIdleConsumers", "false") == "false"
        assert "replicas" not in deployments[name]["spec"], f"{stage}: KEDA owns the replica count"


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_every_container_is_probed_sized_and_covered_by_a_disruption_budget(kustomization: str) -> None:
    manifests = rendered(kustomization)
    budgets = of_kind(manifests, "PodDisruptionBudget")
    for name, deployment in of_kind(manifests, "Deployment").items():
        pod = deployment["spec"]["template"]
        for container in pod["spec"]["containers"]:
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                get = container.get(probe, {}).get("httpGet")
                assert get and get["path"] == path and get["port"] in ports, f"{name}: {probe} on {path}"
            resources = container.get("resources", {})
            for kind in ("cpu", "memory"):
                assert kind in resources.get("requests", {}), f"{name}: no {kind} request"
            assert "memory" in resources.get("limits", {}), f"{name}: no memory limit"
        labels = pod["metadata"]["labels"]
        covering = [
            b for b in budgets.values()
            if all(labels.get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items())
        ]
        assert len(covering) == 1, f"{name}: {len(covering)} PodDisruptionBudgets select its pods"


def test_metrics_are_served_and_scraped_on_each_process_metrics_port() -> None:
    from shared.adapters.metrics import STAGE_METRICS_PORTS

    for name, deployment in of_kind(rendered("base"), "Deployment").items():
        stage = name.removeprefix("treerag-")
        pod = deployment["spec"]["template"]
        [container] = pod["spec"]["containers"]
        port = STAGE_METRICS_PORTS[stage]
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        assert env.get("TREERAG_METRICS_PORT") == str(port), name
        assert {"name": "metrics", "containerPort": port} in container["ports"], name
        assert pod["metadata"]["annotations"]["prometheus.io/port"] == str(port), name


def mebibytes(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity.removesuffix(suffix)) * factor
    return float(quantity) / 2**20


def test_memory_is_above_what_the_bus_benchmark_measured() -> None:
    """Requests hold the peak resident memory measured while ingesting, with room to spare in the limits."""
    runs = json.loads(BUS_COST.read_text())["runs"]
    deployments = of_kind(rendered("base"), "Deployment")
    for stage in (*STAGES, "gateway"):
        peak = max(mb for run in runs for process, mb in run["peak_rss_mb"].items()
                   if process.rsplit("-", 1)[0] == stage)
        [container] = deployments[f"treerag-{stage}"]["spec"]["template"]["spec"]["containers"]
        request = mebibytes(container["resources"]["requests"]["memory"])
        limit = mebibytes(container["resources"]["limits"]["memory"])
        assert request >= peak, f"{stage}: request {request:.0f} MiB below the measured peak {peak:.0f} MiB"
        assert limit >= 1.5 * peak, f"{stage}: limit {limit:.0f} MiB leaves under half the measured peak spare"
