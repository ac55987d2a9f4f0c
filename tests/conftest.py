"""Session fixtures: the real Kafka and FerretDB the integration tests run against.

`infra` starts both through scripts/infra/*.sh on test ports (19092/37017 unless taken, or
TREERAG_TEST_KAFKA_PORT / TREERAG_TEST_MONGO_PORT) in a fresh state folder, once per session,
and stops them at the end. Nothing is skipped: when a server cannot start, every test that
needs it fails with the script's reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INFRA = REPO / "scripts" / "infra"
START_TIMEOUT_S = 600  # a first FerretDB build on 2 cores takes minutes


@dataclass(frozen=True)
class Infra:
    kafka_bootstrap: str
    mongo_url: str
    state_dir: Path
    env: dict[str, str]


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _pick_port(wanted: int, span: int = 1) -> int:
    """`wanted` (and the `span - 1` ports after it) when free, else a free run of ports nearby."""
    for base in [wanted, *range(wanted + 10, wanted + 2000, 10)]:
        if all(_port_free(base + i) for i in range(span)):
            return base
    raise RuntimeError(f"no free ports near {wanted} on 127.0.0.1")


def _run_script(script: str, action: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(INFRA / script), action], env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S
    )


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@pytest.fixture(scope="session")
def infra() -> Iterator[Infra]:
    kafka_port = int(os.environ.get("TREERAG_TEST_KAFKA_PORT") or _pick_port(19092, span=2))
    mongo_port = int(os.environ.get("TREERAG_TEST_MONGO_PORT") or _pick_port(37017))
    state = Path(tempfile.mkdtemp(prefix="treerag-test-infra-"))
    env = {
        **os.environ,
        "TREERAG_RUN": str(state),
        "TREERAG_KAFKA_PORT": str(kafka_port),
        "TREERAG_MONGO_PORT": str(mongo_port),
        "PYTHON": sys.executable,
    }
    try:
        for script in ("kafka.sh", "ferretdb.sh"):
            t0 = time.monotonic()
            result = _run_script(script, "start", env)
            if result.returncode != 0:
                pytest.fail(
                    f"{script} start failed (exit {result.returncode}); the integration tests need it.\n"
                    f"{_tail(result.stderr + result.stdout)}",
                    pytrace=False,
                )
            sys.stderr.write(f"[infra] {script} started in {time.monotonic() - t0:.1f}s\n")
        yield Infra(
            kafka_bootstrap=f"127.0.0.1:{kafka_port}",
            mongo_url=f"mongodb://127.0.0.1:{mongo_port}/",
            state_dir=state,
            env=env,
        )
    finally:
        # Also after a failed start: a script can fail after its server came up.
        for script in ("ferretdb.sh", "kafka.sh"):
            _run_script(script, "stop", env)
        shutil.rmtree(state, ignore_errors=True)
