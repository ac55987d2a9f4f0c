"""CPU seconds and peak memory of a process and its live descendants, from /proc."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.common import process_cpu_seconds


@dataclass(frozen=True)
class ProcessReading:
    cpu_s: float
    peak_rss_mb: float


def descendants(pid: int) -> list[int]:
    """`pid` and every live process below it (a uvicorn supervisor's workers, a JVM's wrapper)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return found


def peak_rss_mb(pid: int) -> float:
    """The process' high-water resident set (VmHWM), in MiB; 0 when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def read_process(pid: int) -> ProcessReading | None:
    """CPU (reaped children included) and peak RSS summed over the process tree; None when gone."""
    tree = descendants(pid)
    cpus = [cpu for p in tree if (cpu := process_cpu_seconds(p)) is not None]
    if not cpus:
        return None
    return ProcessReading(round(sum(cpus), 3), round(sum(peak_rss_mb(p) for p in tree), 1))
