"""Folder ingestion on several processes: `treerag index DIR --workers N` against `--workers 1`.

Each run is a fresh `treerag index` process with a fresh store, over a whole folder (the
FinanceBench filings by default). Runs alternate between the worker counts, so a change of
load on the machine hits both alike. Next to wall time, each run records its own CPU time and
the CPU the rest of the machine spent meanwhile (other processes share the cores: a speed-up
can only show when they leave a core free), and the load average when it started.

    python -m bench.index_workers [--folder DIR] [--workers 1 2] [--rounds 2]
        ->  bench/results/index_workers.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, MachineCpu, configure_bench_logging, shared_data, write_result

logger = logging.getLogger("bench.index_workers")

TARGET_TWO_WORKERS = 1.6


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(folder: Path, workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="treerag-bench-workers-") as store:
        command = [sys.executable, "-m", "treerag", "index", str(folder), "--store", store,
                   "--workers", str(workers), "--no-progress"]
        load = os.getloadavg()[0]
        cpu_before = _children_cpu()
        machine = MachineCpu().start()
        started = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        used = machine.stop()
        cpu = _children_cpu() - cpu_before
        if done.returncode != 0:
            raise RuntimeError(f"treerag index failed ({done.returncode}): {done.stderr.strip()[-400:]}")
        records = [json.loads(p.read_text()) for p in Path(store, "documents").glob("*.json")]
    pages = sum(r["page_count"] for r in records)
    return {
        "workers": workers,
        "files": len(records),
        "pages": pages,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "pages_per_s_wall": round(pages / wall, 1),
        "others_cpu_s": round(max(used["busy_cpu_s"] - cpu, 0.0), 2),
        "load_average_1m_at_start": round(load, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=None, help="Default: ../shared/data/pdfs/financebench.")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    configure_bench_logging()
    folder = args.folder or shared_data() / "pdfs" / "financebench"
    runs: list[dict[str, Any]] = []
    for round_ in range(args.rounds):
        for workers in args.workers:
            run = run_once(folder, workers)
            logger.info("run", extra={"fields": {"round": round_, **run}})
            runs.append(run)
    median_wall = {w: statistics.median(r["wall_s"] for r in runs if r["workers"] == w) for w in args.workers}
    base = min(args.workers)
    speedups = {str(w): round(median_wall[base] / median_wall[w], 2) for w in args.workers}
    result = {
        "folder": str(folder.relative_to(shared_data().parent)) if folder.is_relative_to(shared_data().parent)
        else str(folder),
        "cores": os.cpu_count(),
        "median_wall_s": {str(w): round(v, 2) for w, v in median_wall.items()},
        "speedup_vs_one_worker": speedups,
        "target_two_workers": TARGET_TWO_WORKERS,
        "load_average_1m_at_start": [r["load_average_1m_at_start"] for r in runs],
        "runs": runs,
    }
    write_result("index_workers", result)
    print(json.dumps({"median_wall_s": result["median_wall_s"], "speedup": speedups}, indent=2))


if __name__ == "__main__":
    main()
