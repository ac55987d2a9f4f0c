"""`make bench`: every benchmark in one run on one private stack, results under bench/results/,
and the summary table rewritten in docs/observability.md.

    python -m bench.run_all [--limit N] [--indexers 1,2] [--skip-query]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import bus_ingest, bus_query, cpu_per_stage
from bench.common import REPO, SharedDataMissing, configure_bench_logging, write_result
from bench.stack import BusStack

logger = logging.getLogger("bench")

DOC = REPO / "docs" / "observability.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"

TARGETS = {
    "bus overhead per query at concurrency 1 (p50, ms)": ("<=", 15.0),
    "p99 at concurrency 8 (ms)": ("<=", 150.0),
    "bus ingestion / one process (pages/s)": (">=", 0.8),
    "two indexers / one indexer (pages/s)": (">=", 1.3),
}


def measured(ingest: dict[str, Any], query: dict[str, Any]) -> dict[str, float | None]:
    levels = {lv["concurrency"]: lv for lv in query.get("bus", [])}
    one_bus = next((r for r in ingest.get("runs", []) if r["label"] == "bus, 1 indexer"), None)
    one_process = ingest["runs"][0] if ingest.get("runs") else None
    return {
        "bus overhead per query at concurrency 1 (p50, ms)": query.get("bus_overhead_p50_ms_at_1"),
        "p99 at concurrency 8 (ms)": levels[8]["latency"]["p99_ms"] if 8 in levels else None,
        "bus ingestion / one process (pages/s)": (
            round(one_bus["pages_per_s"] / one_process["pages_per_s"], 3) if one_bus and one_process else None
        ),
        "two indexers / one indexer (pages/s)": ingest.get("two_vs_one_indexer"),
    }


def verdicts(ingest: dict[str, Any], query: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, value in measured(ingest, query).items():
        op, target = TARGETS[name]
        met = None if value is None else (value <= target if op == "<=" else value >= target)
        rows.append({"target": name, "goal": f"{op} {target}", "measured": value, "met": met})
    return rows


def markdown(ingest: dict[str, Any], query: dict[str, Any], targets: list[dict[str, Any]]) -> str:
    env = ingest.get("environment") or query.get("environment") or {}
    lines = [f"Measured {env.get('when', '?')} at {env.get('revision', '?')} on {env.get('cores', '?')} cores "
             "(Kafka, FerretDB, every service and the load generator on the same machine).", ""]
    if ingest.get("runs"):
        lines += ["**Ingestion** "
                  f"({len(ingest['files'])} PDFs, {ingest['runs'][0]['pages']} pages; `treerag` start-up "
                  f"{ingest['treerag_start_s']} s is inside the one-process wall time)", "",
                  "| run | wall s | pages/s | ready/failed | CPU s per page (by process) | machine CPU used |",
                  "|---|---:|---:|---:|---|---:|"]
        for run in ingest["runs"]:
            cpu = ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in run["cpu_s_per_page"].items() if v)
            lines.append(f"| {run['label']} | {run['wall_s']} | {run['pages_per_s']} | {run['ready']}/{run['failed']} "
                         f"| {cpu} | {run['machine']['utilisation'] * 100:.0f}% |")
        lines.append("")
    if query.get("bus"):
        floor = query["one_process"]
        lines += [f"**Queries** ({query['questions']} dev questions, closed loop; the one-process floor is "
                  "`QueryEngine.ask` in one process, warm)", "",
                  "| run | requests | errors | queries/s | p50 ms | p95 ms | p99 ms | CPU ms per query (by process) | machine CPU used |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---:|",
                  f"| one process (floor) | {floor['n']} | 0 | {1000 / floor['mean_ms']:.1f} | {floor['p50_ms']} | "
                  f"{floor['p95_ms']} | {floor['p99_ms']} | | |"]
        for lv in query["bus"]:
            lat = lv["latency"]
            cpu = ", ".join(f"{k} {v * 1000:.1f}" for k, v in lv["cpu_s_per_query"].items() if v)
            lines.append(f"| bus, concurrency {lv['concurrency']} | {lv['requests']} | {sum(lv['errors'].values())} | "
                         f"{lv['throughput_qps']} | {lat['p50_ms']} | {lat['p95_ms']} | {lat['p99_ms']} | {cpu} | "
                         f"{lv['machine']['utilisation'] * 100:.0f}% |")
        hit = query.get("cache_hit") or {}
        if hit.get("n"):
            lines.append(f"| bus, cache hit (concurrency 1) | {hit['n']} | | | {hit['p50_ms']} | {hit['p95_ms']} | {hit['p99_ms']} | | |")
        lines.append("")
    lines += ["**Targets**", "", "| target | goal | measured | met |", "|---|---|---:|---|"]
    for row in targets:
        met = {True: "yes", False: "**no**", None: "not measured"}[row["met"]]
        lines.append(f"| {row['target']} | {row['goal']} | {row['measured']} | {met} |")
    return "\n".join(lines) + "\n"


def update_doc(table: str) -> None:
    if not DOC.exists():
        return
    text = DOC.read_text()
    if START in text and END in text:
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(f"{head}{START}\n{table}{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run every benchmark through the bus beside the one-process pipeline.")
    parser.add_argument("--limit", type=int, help="only the first N PDFs of the ingestion corpus")
    parser.add_argument("--indexers", default="1,2", help="indexer process counts (default 1,2)")
    parser.add_argument("--skip-query", action="store_true", help="ingestion only")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench")
    args = parser.parse_args(argv)
    configure_bench_logging()
    try:
        files = bus_ingest.corpus(limit=args.limit)
    except SharedDataMissing as exc:
        logger.error("%s", exc)
        return 2
    counts = tuple(int(x) for x in args.indexers.split(","))
    stack = BusStack(args.run_dir)
    started = time.perf_counter()
    stack.start_infra()
    try:
        with tempfile.TemporaryDirectory(prefix="treerag-bench-") as tmp:
            store = Path(tmp) / "store"
            ingest = bus_ingest.run(stack, files, counts, store, keep_last=not args.skip_query)
            doc_ids = ingest.pop("doc_ids")
            query: dict[str, Any] = {}
            if not args.skip_query:
                try:
                    query = bus_query.run(stack, store, doc_ids)
                finally:
                    stack.stop_services()
    finally:
        stack.stop_services()
        stack.stop_infra()
    targets = verdicts(ingest, query)
    ingest = write_result("bus_ingest", ingest)
    if query:
        write_result("bus_query", query)
    write_result("cpu_per_stage", cpu_per_stage.summarize(ingest, query))
    write_result("targets", {"targets": targets, "total_s": round(time.perf_counter() - started, 1)})
    table = markdown(ingest, query, targets)
    update_doc(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
