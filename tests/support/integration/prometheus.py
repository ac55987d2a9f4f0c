"""A real Prometheus (Debian's `prometheus` binary) scraping the processes of a test stack, with
the repository's local configuration and rules, and the dashboards' panel queries asked of it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.integration.stack import free_port, wait_until

REPO = Path(__file__).resolve().parents[3]
LOCAL_CONFIG = REPO / "deploy" / "prometheus" / "prometheus.local.yml"
RULES = REPO / "deploy" / "prometheus" / "rules"
DASHBOARDS = REPO / "deploy" / "grafana" / "dashboards"
SCRAPE_INTERVAL_S = 5.0  # prometheus.local.yml's

# Grafana's built-in variables, as Grafana would fill them for a dashboard opened on the last
# few minutes (the test's whole traffic is inside both windows).
BUILT_INS = {"__rate_interval": "2m", "__interval": "15s", "__range": "5m"}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")


class PrometheusMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class Panel:
    dashboard: str
    title: str
    expr: str

    def __str__(self) -> str:
        return f"{self.dashboard} / {self.title}: {self.expr}"


def dashboard_panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])  # collapsed rows nest their panels


def panel_queries() -> list[Panel]:
    found = []
    for path in sorted(DASHBOARDS.glob("*.json")):
        dashboard = json.loads(path.read_text())
        for panel in dashboard_panels(dashboard):
            for target in panel.get("targets", []):
                found.append(Panel(path.name, panel.get("title", "?"), target["expr"]))
    return found


def template_variables() -> dict[str, dict[str, Any]]:
    """Every dashboard variable by name (the dashboards share their variables' meanings)."""
    variables: dict[str, dict[str, Any]] = {}
    for path in sorted(DASHBOARDS.glob("*.json")):
        for variable in json.loads(path.read_text()).get("templating", {}).get("list", []):
            variables[variable["name"]] = variable
    return variables


def substitute(expr: str, values: dict[str, str]) -> str:
    """The PromQL Grafana sends: built-ins and dashboard variables replaced by their values."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in values:
            raise KeyError(f"variable ${name} is neither a Grafana built-in nor defined by the dashboard")
        return values[name]

    return _VARIABLE.sub(value, expr)


@dataclass
class Prometheus:
    """One Prometheus server in `folder`, on the local config (rules included) and file_sd targets."""

    folder: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, folder: Path, targets: dict[str, list[str]]) -> Prometheus:
        binary = shutil.which("prometheus")
        if binary is None:
            raise PrometheusMissing("the prometheus binary is not on PATH: run `make prometheus` (Debian's package)")
        folder.mkdir(parents=True, exist_ok=True)
        # The same layout as `make up`: the config's relative rules/ and targets/ beside it.
        (folder / "prometheus.yml").symlink_to(LOCAL_CONFIG)
        (folder / "rules").symlink_to(RULES)
        server = cls(folder, free_port())
        for job, addresses in targets.items():
            server.set_targets(job, addresses)
        log = (folder / "prometheus.log").open("ab")
        server.process = subprocess.Popen(
            [binary, f"--config.file={folder / 'prometheus.yml'}", f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{server.port}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        wait_until(server.ready, 30, "prometheus /-/ready", interval_s=0.2)
        return server

    def set_targets(self, job: str, addresses: list[str]) -> None:
        directory = self.folder / "targets"
        directory.mkdir(exist_ok=True)
        staged = directory / f".{job}.json"
        staged.write_text(json.dumps([{"targets": addresses}]))
        staged.rename(directory / f"{job}.json")  # file_sd must never read a half-written file

    def ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"prometheus exited: {self.log_tail()}")
        try:
            return httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def log_tail(self, lines: int = 20) -> str:
        path = self.folder / "prometheus.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def api(self, path: str, **params: Any) -> Any:
        response = httpx.get(f"{self.url}/api/v1/{path}", params=params, timeout=10)
        body = response.json()
        if body.get("status") != "success":
            raise AssertionError(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        return list(self.api("query", query=expr)["result"])

    def value(self, expr: str) -> float:
        result = self.query(expr)
        assert len(result) == 1, f"{expr} returned {result}"
        return float(result[0]["value"][1])

    def targets_up(self) -> dict[str, int]:
        up: dict[str, int] = {}
        for target in self.api("targets")["activeTargets"]:
            if target["health"] == "up":
                up[target["labels"]["job"]] = up.get(target["labels"]["job"], 0) + 1
        return up

    def scraped_after(self, moment: float, job: str) -> bool:
        """Every target of `job` has been scraped since the wall-clock time `moment`."""
        targets = [t for t in self.api("targets")["activeTargets"] if t["labels"]["job"] == job]
        return bool(targets) and all(_epoch(t["lastScrape"]) > moment for t in targets)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def _epoch(timestamp: str) -> float:
    from datetime import datetime

    # Prometheus writes nanoseconds; Python parses at most microseconds.
    trimmed = re.sub(r"(\.\d{6})\d*", r"\1", timestamp).replace("Z", "+00:00")
    return datetime.fromisoformat(trimmed).timestamp()


def wait_for_scrapes(server: Prometheus, jobs: list[str], rounds: int = 2, timeout_s: float = 30.0) -> None:
    """Wait until every target of `jobs` has been scraped `rounds` more times from now."""
    for _ in range(rounds):
        moment = time.time()
        wait_until(lambda m=moment: all(server.scraped_after(m, job) for job in jobs), timeout_s,
                   f"a scrape of {jobs} after {moment:.0f}", interval_s=0.5)
