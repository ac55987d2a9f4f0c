"""Running the services as real subprocesses against the test Kafka and FerretDB."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pymongo import MongoClient

REPO = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 240.0  # imports alone take tens of seconds on a loaded 2-core machine

T = TypeVar("T")


def wait_until(check: Callable[[], T], timeout_s: float, what: str, interval_s: float = 0.2) -> T:
    """Poll `check` until it returns something truthy; fail with `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    last: T | None = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what} (last value: {last!r})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServiceProcess:
    name: str
    args: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    # Where its /metrics is served without a key (each process's own metrics port).
    metrics_port: int | None = None

    def start(self) -> ServiceProcess:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, *self.args], cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_records(self) -> list[dict[str, Any]]:
        records = []
        for line in self.log_text().splitlines():
            if line.startswith("{"):
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return records

    def has_logged(self, msg: str) -> bool:
        return any(r.get("msg") == msg for r in self.log_records())

    def check_alive(self) -> None:
        if not self.alive:
            raise AssertionError(f"{self.name} exited with {self.process and self.process.returncode}:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL: no cleanup, no commit, like a crashed host."""
        if self.alive:
            os.kill(self.pid, signal.SIGKILL)
            assert self.process is not None
            self.process.wait(30)

    def stop(self, timeout_s: float = 40.0) -> None:
        if not self.alive:
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()


@dataclass
class Gateway:
    process: ServiceProcess
    port: int
    key: str | None = None  # the API key its requests carry (`Stack.create_key`)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def request(self, method: str, path: str, **options: Any) -> httpx.Response:
        """`path` on this gateway, with its key (headers given are added to it)."""
        headers = {**self.auth, **options.pop("headers", {})}
        options.setdefault("timeout", 30)
        return httpx.request(method, f"{self.url}{path}", headers=headers, **options)

    def get(self, path: str, **options: Any) -> httpx.Response:
        return self.request("GET", path, **options)

    def post(self, path: str, **options: Any) -> httpx.Response:
        return self.request("POST", path, **options)

    def delete(self, path: str, **options: Any) -> httpx.Response:
        return self.request("DELETE", path, **options)

    def options(self, path: str, **options: Any) -> httpx.Response:
        return self.request("OPTIONS", path, **options)

    def as_key(self, key: str | None) -> Gateway:
        """The same gateway, called with another key (another tenant's, or none)."""
        return Gateway(self.process, self.port, key)

    def ready(self) -> bool:
        self.process.check_alive()
        try:
            return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False


@dataclass
class Stack:
    """The services of one test session, isolated by a topic prefix and a database name."""

    kafka_bootstrap: str
    mongo_url: str
    namespace: str
    workdir: Path
    processes: list[ServiceProcess] = field(default_factory=list)
    started: dict[str, int] = field(default_factory=dict)

    def _next_index(self, kind: str) -> int:
        """Every process gets its own log file, also when an earlier one of its kind stopped."""
        self.started[kind] = self.started.get(kind, 0) + 1
        return self.started[kind] - 1

    @property
    def db_name(self) -> str:
        return f"treerag_{self.namespace}"

    @property
    def prefix(self) -> str:
        return f"{self.namespace}."

    def topic(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "TREERAG_KAFKA_BOOTSTRAP": self.kafka_bootstrap,
            "TREERAG_MONGO_URL": self.mongo_url,
            "TREERAG_MONGO_DB": self.db_name,
            # As `make up` runs them: file bytes in a folder the gateway and the indexers share.
            "TREERAG_BLOB_DIR": str(self.workdir / "blobs"),
            "TREERAG_TOPIC_PREFIX": self.prefix,
            "TREERAG_LLM": "off",
            "TREERAG_LOG_LEVEL": "INFO",
            # The query stages run the whole session; an indexer only in the tests that start one.
            "TREERAG_READY_STAGES": "navigator,compressor,verifier",
            **extra,
        }

    def start_stage(self, stage: str, **extra_env: str) -> ServiceProcess:
        index = self._next_index(stage)
        # Its own metrics port, so that a Prometheus can scrape every replica.
        metrics_port = int(extra_env.pop("TREERAG_METRICS_PORT", 0)) or free_port()
        process = ServiceProcess(
            f"{stage}-{index}", ["-m", f"services.{stage}"],
            self.env(TREERAG_METRICS_PORT=str(metrics_port), **extra_env),
            self.workdir / f"{stage}-{index}.log", metrics_port=metrics_port,
        ).start()
        self.processes.append(process)
        return process

    def start_gateway(self, key: str | None = None, **extra_env: str) -> Gateway:
        """A gateway asking for API keys (TREERAG_AUTH=on, its default); `key`: the one its
        requests carry. No rate limits unless `TREERAG_RATE_LIMIT_PER_S` or
        `TREERAG_AUTH_FAILURES_PER_S` is given: the tests send bursts (and refused keys) a person
        would not."""
        port = free_port()
        metrics_port = int(extra_env.pop("TREERAG_METRICS_PORT", 0)) or free_port()
        index = self._next_index("gateway")
        env = self.env(**{"TREERAG_RATE_LIMIT_PER_S": "0", "TREERAG_AUTH_FAILURES_PER_S": "0",
                          "TREERAG_METRICS_PORT": str(metrics_port), **extra_env})
        process = ServiceProcess(
            f"gateway-{index}", ["-m", "services.gateway", "--port", str(port)], env,
            self.workdir / f"gateway-{index}.log", metrics_port=metrics_port,
        ).start()
        self.processes.append(process)
        return Gateway(process, port, key)

    def create_key(self, tenant: str, *, admin: bool = False) -> str:
        """A new API key in this stack's database, made as an operator makes one: `treerag keys`."""
        command = [sys.executable, "-m", "treerag", "keys", "--mongo-url", self.mongo_url, "--mongo-db",
                   self.db_name, "create", "--tenant", tenant, *(["--admin"] if admin else [])]
        done = subprocess.run(command, cwd=REPO, env=self.env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def wait_consuming(self, process: ServiceProcess, timeout_s: float = START_TIMEOUT_S) -> None:
        def consuming() -> bool:
            process.check_alive()
            return process.has_logged("consuming")

        wait_until(consuming, timeout_s, f"{process.name} to start consuming", interval_s=0.3)

    def assigned_partitions(self, process: ServiceProcess) -> list[str] | None:
        """The partitions `process` owns after its latest rebalance (None before the first)."""
        assigned = [r for r in process.log_records() if r.get("msg") == "partitions assigned"]
        return assigned[-1]["partitions"] if assigned else None

    @contextmanager
    def running(self, stage: str) -> Iterator[ServiceProcess]:
        """One process of `stage`, consuming before the body runs, stopped after it."""
        process = self.start_stage(stage)
        try:
            self.wait_consuming(process)
            yield process
        finally:
            self.stop(process)

    def stop(self, process: ServiceProcess) -> None:
        process.stop()
        if process in self.processes:
            self.processes.remove(process)

    def stop_many(self, processes: list[ServiceProcess]) -> None:
        """SIGTERM to all first, then wait: graceful shutdowns overlap instead of queueing."""
        for process in processes:
            if process.alive and process.process is not None:
                process.process.send_signal(signal.SIGTERM)
        for process in processes:
            process.stop()
            if process in self.processes:
                self.processes.remove(process)

    def stop_all(self) -> None:
        self.stop_many(list(self.processes))

    def mongo(self) -> MongoClient[dict[str, Any]]:
        return MongoClient(self.mongo_url, tz_aware=True, serverSelectionTimeoutMS=10_000)

    def logs(self) -> str:
        return "\n\n".join(f"== {p.name} (pid {p.pid})\n{p.tail()}" for p in self.processes)
