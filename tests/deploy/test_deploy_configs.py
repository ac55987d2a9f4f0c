"""The Prometheus and Grafana files under deploy/ are valid and scrape every stage on its port.

These checks follow Prometheus' and Grafana's documented file structure and need no binary;
`make prometheus-rules` (part of `make test`) also runs `promtool check config` and the rules'
unit tests.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.adapters.metrics import STAGE_METRICS_PORTS

REPO = Path(__file__).resolve().parents[2]
PROMETHEUS = REPO / "deploy" / "prometheus"
GRAFANA = REPO / "deploy" / "grafana"

# Prometheus' duration syntax, e.g. 5s, 1m30s.
_DURATION = re.compile(r"^((\d+)y)?((\d+)w)?((\d+)d)?((\d+)h)?((\d+)m)?((\d+)s)?((\d+)ms)?$")
_SCRAPE_KEYS = {
    "job_name", "scrape_interval", "scrape_timeout", "metrics_path", "scheme", "honor_labels",
    "static_configs", "dns_sd_configs", "file_sd_configs", "relabel_configs", "metric_relabel_configs",
    "params",
}


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def check_durations(section: dict[str, Any], where: str) -> None:
    for key in ("scrape_interval", "scrape_timeout", "evaluation_interval", "refresh_interval"):
        if key in section:
            value = str(section[key])
            assert value and _DURATION.match(value), f"{where}: {key}={value!r} is not a Prometheus duration"


def scrape_jobs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    assert set(config) <= {"global", "scrape_configs", "rule_files", "alerting"}, f"unknown top-level keys {set(config)}"
    check_durations(config.get("global", {}), "global")
    jobs: dict[str, dict[str, Any]] = {}
    for job in config["scrape_configs"]:
        name = job["job_name"]
        assert name not in jobs, f"job {name} defined twice"
        assert set(job) <= _SCRAPE_KEYS, f"job {name}: unknown keys {set(job) - _SCRAPE_KEYS}"
        check_durations(job, name)
        jobs[name] = job
    return jobs


def test_local_config_scrapes_every_replica_listed_in_its_targets_file() -> None:
    jobs = scrape_jobs(load(PROMETHEUS / "prometheus.local.yml"))
    assert set(jobs) == set(STAGE_METRICS_PORTS)
    for stage in STAGE_METRICS_PORTS:
        [file_sd] = jobs[stage]["file_sd_configs"]
        check_durations(file_sd, f"{stage} file_sd")
        # scripts/stack.sh writes one line per replica there (tests/support/integration/prometheus.py too).
        assert file_sd["files"] == [f"targets/{stage}.json"]


def test_stack_script_takes_the_stages_metrics_ports_from_their_one_definition() -> None:
    script = (REPO / "scripts" / "stack.sh").read_text()
    assert "STAGE_METRICS_PORTS" in script
    assert not re.search(r"\b910[1-4]\b", script.split("cmd_up()")[1]), "a port number is repeated in stack.sh"


@pytest.mark.parametrize("config", ["prometheus.local.yml", "prometheus.yml"])
def test_both_configs_load_the_rules(config: str) -> None:
    patterns = load(PROMETHEUS / config)["rule_files"]
    found = [path for pattern in patterns for path in PROMETHEUS.glob(pattern)]
    assert found and all(path.parent == PROMETHEUS / "rules" for path in found), patterns


def test_compose_config_discovers_every_replica_by_service_name() -> None:
    jobs = scrape_jobs(load(PROMETHEUS / "prometheus.yml"))
    assert set(jobs) == set(STAGE_METRICS_PORTS)
    for stage, port in STAGE_METRICS_PORTS.items():
        [dns] = jobs[stage]["dns_sd_configs"]
        check_durations(dns, f"{stage} dns_sd")
        # An A lookup of the compose service name returns every scaled replica.
        assert dns["names"] == [stage] and dns["type"] == "A" and dns["port"] == port


def test_grafana_datasource_points_at_prometheus() -> None:
    [source] = load(GRAFANA / "provisioning" / "datasources" / "prometheus.yml")["datasources"]
    assert source["type"] == "prometheus" and source["access"] == "proxy"
    assert re.match(r"^https?://[\w.-]+:\d+/?$", source["url"]), source["url"]
    assert source["uid"] and source.get("isDefault") is True


def test_grafana_dashboard_provider_loads_files() -> None:
    config = load(GRAFANA / "provisioning" / "dashboards" / "treerag.yml")
    assert config["apiVersion"] == 1
    [provider] = config["providers"]
    assert provider["type"] == "file" and Path(provider["options"]["path"]).is_absolute()


def compose_file() -> dict[str, Any] | None:
    for name in ("docker-compose.yml", "compose.yml", "docker-compose.yaml", "compose.yaml"):
        if (REPO / name).exists():
            return load(REPO / name)
    return None


def test_compose_mounts_the_configs_where_prometheus_and_grafana_read_them() -> None:
    compose = compose_file()
    if compose is None or not {"prometheus", "grafana"} <= set(compose.get("services", {})):
        pytest.skip("no docker-compose file with prometheus and grafana services yet")
    services = compose["services"]
    prom_mounts = " ".join(str(v) for v in services["prometheus"].get("volumes", []))
    assert "deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml" in prom_mounts
    # prometheus.yml's rule_files are relative to it.
    assert "deploy/prometheus/rules:/etc/prometheus/rules" in prom_mounts
    graf_mounts = " ".join(str(v) for v in services["grafana"].get("volumes", []))
    provider = load(GRAFANA / "provisioning" / "dashboards" / "treerag.yml")["providers"][0]
    assert "deploy/grafana/provisioning" in graf_mounts and "/etc/grafana/provisioning" in graf_mounts
    assert f"deploy/grafana/dashboards:{provider['options']['path']}" in graf_mounts.replace("./", "")
