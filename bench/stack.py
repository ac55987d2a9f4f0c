"""A private bus stack for the benchmarks: Kafka and FerretDB from scripts/infra on their own
ports and state folder, and every service as a local process, so a run never touches `make up`'s
stack and can restart the services with a fresh database and a chosen number of indexers."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench.common import REPO
from bench.proc import read_process

logger = logging.getLogger("bench.stack")

STAGES = ("indexer", "navigator", "compressor", "verifier")


class StackError(RuntimeError):
    pass


@dataclass
class StackPorts:
    kafka: int = int(os.environ.get("TREERAG_BENCH_KAFKA_PORT", 19392))
    mongo: int = int(os.environ.get("TREERAG_BENCH_MONGO_PORT", 37317))
    gateway: int = int(os.environ.get("TREERAG_BENCH_GATEWAY_PORT", 18300))
    # Stage i's k-th process serves metrics on metrics_base + 10*k + i (i: 1..4).
    metrics_base: int = int(os.environ.get("TREERAG_BENCH_METRICS_BASE", 19300))


@dataclass
class ServiceProcess:
    stage: str
    replica: int
    process: subprocess.Popen[bytes]
    metrics_url: str
    log_path: Path

    @property
    def name(self) -> str:
        return f"{self.stage}-{self.replica}"

    @property
    def health_url(self) -> str:
        """Ready: started, with Kafka and the store answering (served beside /metrics)."""
        return self.metrics_url.removesuffix("/metrics") + "/readyz"


@dataclass
class BusStack:
    run_dir: Path
    ports: StackPorts = field(default_factory=StackPorts)
    python: str = sys.executable
    services: list[ServiceProcess] = field(default_factory=list)
    database: str = ""
    # Settings of one stage's processes beside the shared ones (a model for the verifier alone).
    stage_env: dict[str, dict[str, str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ infra

    def _infra_env(self) -> dict[str, str]:
        return {
            **os.environ,
            "TREERAG_KAFKA_PORT": str(self.ports.kafka),
            "TREERAG_MONGO_PORT": str(self.ports.mongo),
            "TREERAG_RUN": str(self.run_dir / "infra"),
            "PYTHON": self.python,
        }

    def _infra(self, script: str, action: str) -> None:
        path = REPO / "scripts" / "infra" / script
        result = subprocess.run(["bash", str(path), action], env=self._infra_env(), capture_output=True, text=True)
        if result.returncode != 0:
            raise StackError(f"{script} {action} failed:\n{result.stderr[-3000:]}")

    def start_infra(self) -> None:
        """Fresh Kafka (its state folder wiped: no topics or offsets from an earlier run) and FerretDB."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._infra("kafka.sh", "reset")
        self._infra("kafka.sh", "start")
        self._infra("ferretdb.sh", "start")

    def stop_infra(self) -> None:
        for script in ("kafka.sh", "ferretdb.sh"):
            try:
                self._infra(script, "stop")
            except StackError as exc:
                logger.warning("%s", exc)

    def infra_pids(self) -> dict[str, int]:
        pids = {}
        infra = self.run_dir / "infra"
        for name, pidfile in (
            ("kafka", infra / f"kafka-{self.ports.kafka}" / "kafka.pid"),
            ("ferretdb", infra / f"ferretdb-{self.ports.mongo}" / "ferretdb.pid"),
        ):
            try:
                pids[name] = int(pidfile.read_text().strip())
            except (OSError, ValueError):
                pass
        return pids

    # --------------------------------------------------------------- services

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.gateway}"

    @property
    def kafka_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ports.kafka}"

    @property
    def mongo_url(self) -> str:
        return f"mongodb://127.0.0.1:{self.ports.mongo}/"

    def service_env(self, metrics_port: int | None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            TREERAG_KAFKA_BOOTSTRAP=self.kafka_bootstrap,
            TREERAG_MONGO_URL=self.mongo_url,
            TREERAG_MONGO_DB=self.database,
            # As `make up` runs them: file bytes in a folder the gateway and the indexers share.
            TREERAG_BLOB_DIR=str(self.run_dir / "blobs" / self.database),
            TREERAG_GATEWAY_PORT=str(self.ports.gateway),
            TREERAG_LLM="off",
            # A loopback gateway only the benchmark calls: no keys, no per-key request budget
            # (the benchmark's bursts are what it measures).
            TREERAG_AUTH="off",
            TREERAG_LOG_LEVEL=os.environ.get("TREERAG_BENCH_SERVICE_LOG_LEVEL", "WARNING"),
            PYTHONUNBUFFERED="1",
        )
        if metrics_port is not None:
            env["TREERAG_METRICS_PORT"] = str(metrics_port)
        return env

    def _command(self, stage: str) -> list[str]:
        package = REPO / "services" / stage
        if (package / "__main__.py").exists():
            return [self.python, "-m", f"services.{stage}"]
        if stage == "gateway" and (package / "main.py").exists():
            return [self.python, "-m", "uvicorn", "services.gateway.main:app", "--host", "127.0.0.1",
                    "--port", str(self.ports.gateway), "--log-level", "warning", "--no-proxy-headers"]
        raise StackError(f"services/{stage} has neither __main__.py nor main.py: the bus services are not built yet")

    def _spawn(self, stage: str, replica: int) -> ServiceProcess:
        if stage == "gateway":
            metrics_port = None
            metrics_url = f"{self.gateway_url}/metrics"
        else:
            metrics_port = self.ports.metrics_base + 10 * replica + STAGES.index(stage) + 1
            metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        logs = self.run_dir / "logs" / self.database
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"{stage}-{replica}.log"
        process = subprocess.Popen(
            self._command(stage), cwd=REPO, env={**self.service_env(metrics_port), **self.stage_env.get(stage, {})},
            stdout=log_path.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        service = ServiceProcess(stage, replica, process, metrics_url, log_path)
        self.services.append(service)
        return service

    def start_services(self, database: str, indexers: int = 1, timeout_s: float = 120.0) -> None:
        """Every stage once (the indexer `indexers` times) on a fresh database, then wait until
        each answers and every indexer owns partitions of the upload topic."""
        if self.services:
            raise StackError("services are already running; stop_services() first")
        self.database = database
        for replica in range(indexers):
            self._spawn("indexer", replica)
        for stage in STAGES[1:]:
            self._spawn(stage, 0)
        self._spawn("gateway", 0)
        self.wait_ready(timeout_s)

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        pending = {s.name: s for s in self.services}
        with httpx.Client(timeout=2.0) as client:
            while pending:
                for name, service in list(pending.items()):
                    if service.process.poll() is not None:
                        raise StackError(
                            f"{name} exited with {service.process.returncode}; its log {service.log_path} ends:\n"
                            + service.log_path.read_text(errors="replace")[-3000:]
                        )
                    url = f"{self.gateway_url}/readyz" if service.stage == "gateway" else service.health_url
                    try:
                        if client.get(url).status_code == 200:
                            del pending[name]
                    except httpx.HTTPError:
                        pass
                if pending and time.monotonic() > deadline:
                    raise StackError(f"not ready after {timeout_s:.0f}s: {sorted(pending)} (logs in {self.run_dir / 'logs'})")
                time.sleep(0.3)

    def wait_indexers_assigned(self, timeout_s: float = 60.0) -> bool:
        """True once every indexer reports lag for some partition, i.e. owns partitions after the
        group's rebalance (the lag reporter only records assigned partitions)."""
        deadline = time.monotonic() + timeout_s
        indexers = [s for s in self.services if s.stage == "indexer"]
        while time.monotonic() < deadline:
            owned = [bool(scrape(s.metrics_url).get("treerag_consumer_lag")) for s in indexers]
            if all(owned):
                return True
            time.sleep(1.0)
        logger.warning("not every indexer reported partitions within %.0fs", timeout_s)
        return False

    def stop_services(self) -> None:
        for service in self.services:
            if service.process.poll() is None:
                os.killpg(service.process.pid, signal.SIGTERM)
        for service in self.services:
            try:
                service.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(service.process.pid, signal.SIGKILL)
                service.process.wait(timeout=10)
        self.services = []

    # ---------------------------------------------------------------- readings

    def cpu_by_stage(self) -> dict[str, float]:
        """CPU seconds so far of each stage and of Kafka and FerretDB, from /proc (each process
        with its children): nothing is asked of the processes, so reading costs them nothing."""
        totals: dict[str, float] = {}
        pids = [(service.stage, service.process.pid) for service in self.services]
        pids += list(self.infra_pids().items())
        for name, pid in pids:
            reading = read_process(pid)
            totals[name] = totals.get(name, 0.0) + (reading.cpu_s if reading is not None else 0.0)
        return totals

    def metric_totals(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        """A metric's samples summed over every service that exports it, by label set."""
        summed: dict[tuple[tuple[str, str], ...], float] = {}
        for service in self.services:
            for labels, value in scrape(service.metrics_url).get(name, {}).items():
                summed[labels] = summed.get(labels, 0.0) + value
        return summed


def scrape(url: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Samples of one /metrics page: {sample name: {sorted label pairs: value}}; empty when down."""
    try:
        text = httpx.get(url, timeout=5.0).text
    except httpx.HTTPError:
        return {}
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: round(after.get(name, 0.0) - before.get(name, 0.0), 3) for name in sorted(set(before) | set(after))}
