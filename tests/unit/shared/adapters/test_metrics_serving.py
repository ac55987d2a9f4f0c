"""A stage's /metrics: one process, or several workers aggregated in multiprocess mode."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[4]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def run_python(code: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


WORKER = """
    import sys
    from shared.adapters.metrics import PAGES_INDEXED, CONSUMER_LAG, INFLIGHT_QUERIES, start_metrics_server
    serving = start_metrics_server({port}, addr="127.0.0.1")
    PAGES_INDEXED.labels(builder="outline").inc({pages})
    INFLIGHT_QUERIES.inc(2)
    CONSUMER_LAG.labels(stage="indexer", topic="document.uploaded", partition="{partition}").set({lag})
    sum(i * i for i in range(300_000))  # some CPU to be counted
    print("serving" if serving else "writing", flush=True)
    sys.stdin.read()  # stay alive until the test closes stdin
"""


def test_workers_of_one_stage_are_served_as_one_aggregate(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    first = run_python(WORKER.format(port=port, pages=3, partition=0, lag=5), env)
    assert first.stdout.readline().strip() == "serving", first.stderr.read()
    second = run_python(WORKER.format(port=port, pages=4, partition=1, lag=7), env)
    try:
        # The second worker finds the port taken and only writes its values.
        assert second.stdout.readline().strip() == "writing", second.stderr.read()
        metrics = samples(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text)
        assert metrics[("treerag_pages_indexed_total", (("builder", "outline"),))] == 7
        assert metrics[("treerag_gateway_inflight_queries", ())] == 4
        lag = {labels: v for (name, labels), v in metrics.items() if name == "treerag_consumer_lag"}
        assert sorted(lag.values()) == [5, 7]
        assert metrics[("process_cpu_seconds_total", ())] > 0
    finally:
        for proc in (first, second):
            proc.stdin.close()
            proc.wait(timeout=10)


def test_one_process_serves_its_own_registry_and_refuses_a_taken_port() -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k.lower() != "prometheus_multiproc_dir"}
    first = run_python(WORKER.format(port=port, pages=2, partition=0, lag=1), env)
    try:
        assert first.stdout.readline().strip() == "serving", first.stderr.read()
        metrics = samples(httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text)
        assert metrics[("treerag_pages_indexed_total", (("builder", "outline"),))] == 2
        assert metrics[("process_cpu_seconds_total", ())] > 0
        second = run_python(WORKER.format(port=port, pages=1, partition=1, lag=1), env)
        _, err = second.communicate(timeout=30)
        assert second.returncode != 0 and "TREERAG_METRICS_PORT" in err
    finally:
        first.stdin.close()
        first.wait(timeout=10)


def test_a_multiprocess_dir_not_created_yet_is_created(tmp_path: Path) -> None:
    folder = tmp_path / "not-yet"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    proc = run_python("from shared.adapters.metrics import PAGES_INDEXED; PAGES_INDEXED.labels(builder='x').inc()", env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert list(folder.glob("counter_*.db")), "the worker's values were not written to the folder"
