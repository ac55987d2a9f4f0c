"""What every benchmark shares: data paths, percentiles, CPU readings and result files."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TREERAG_SHARED_DATA", REPO.parent / "shared" / "data"))
RESULTS = REPO / "bench" / "results"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

logger = logging.getLogger("bench")


class SharedDataMissing(RuntimeError):
    """The benchmarks read ../shared/data; without it they cannot run."""


def shared_data() -> Path:
    if not (SHARED_DATA / "pdfs").is_dir():
        raise SharedDataMissing(
            f"{SHARED_DATA} has no pdfs/ folder: the benchmarks need the shared data set beside the "
            "checkout (../shared/data) or TREERAG_SHARED_DATA pointing at it"
        )
    return SHARED_DATA


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100), as numpy's default."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(seconds: list[float]) -> dict[str, float | None]:
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None, "max_ms": None}
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "mean_ms": round(sum(ms) / len(ms), 2),
        "max_ms": round(max(ms), 2),
    }


def process_cpu_seconds(pid: int) -> float | None:
    """User+system CPU of a process and its reaped children, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # Fields 14-17 of /proc/<pid>/stat (utime, stime, cutime, cstime); index 0 here is field 3.
    return sum(int(f) for f in fields[11:15]) / CLOCK_TICKS


def machine_cpu_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]  # idle + iowait
    total = sum(parts[:8])  # guest time is already inside user
    return (total - idle) / CLOCK_TICKS, total / CLOCK_TICKS


class MachineCpu:
    """Share of the whole machine's CPU used between start() and stop(): the visible ceiling."""

    def start(self) -> MachineCpu:
        self._busy, self._total = machine_cpu_seconds()
        self._wall = time.perf_counter()
        return self

    def stop(self) -> dict[str, float]:
        busy, total = machine_cpu_seconds()
        wall = time.perf_counter() - self._wall
        return {
            "cores": os.cpu_count() or 1,
            "busy_cpu_s": round(busy - self._busy, 2),
            "wall_s": round(wall, 2),
            "utilisation": round((busy - self._busy) / max(total - self._total, 1e-9), 3),
        }


def git_revision() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout
        return out.stdout.strip() + ("+dirty" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment() -> dict[str, Any]:
    return {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "revision": git_revision(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
    }


def write_result(name: str, result: dict[str, Any]) -> dict[str, Any]:
    """bench/results/<name>.json: the latest run (the git history keeps the earlier ones)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "environment": environment(), **result}
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    latest = RESULTS / f"{name}.json"
    latest.write_text(text)
    logger.info("wrote %s", latest)
    return payload


def configure_bench_logging() -> None:
    from shared.adapters.logs import configure_logging

    configure_logging(os.environ.get("TREERAG_BENCH_LOG_LEVEL", "INFO"))
    # One line per HTTP request of the load generator would bury the results.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("treerag.pipeline").setLevel(logging.WARNING)


def run_in_store(
    main_async: Callable[[Path], Awaitable[Any]], store: Path | None, prefix: str
) -> Any:
    """Run a benchmark against `store`, or a temporary store removed afterwards."""
    if store:
        return asyncio.run(main_async(store))
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        return asyncio.run(main_async(Path(tmp)))
