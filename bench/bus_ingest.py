"""Ingestion through the bus beside the one-process `treerag index` of the same PDFs, in one run.

Pages/s through the bus run from the first upload to the last document seen `ready`; the stack
is warm (a small document goes through first), with one and then two indexer processes, each
time on a fresh database. The one-process figure is `treerag index` of the same files into an
empty embedded store, its interpreter start included and also reported on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pypdfium2

from bench.common import (
    REPO,
    MachineCpu,
    configure_bench_logging,
    shared_data,
    write_result,
)
from bench.stack import BusStack, cpu_delta

logger = logging.getLogger("bench.ingest")

DEFAULT_FOLDERS = ("r-manuals", "pageindex", "mmlongbench")
# refman (2,415 pages) is the stress test of `treerag index`; it would dominate every figure here.
EXCLUDED = {"refman.pdf"}
POLL_S = 0.2


@dataclass
class IngestRun:
    label: str
    documents: int
    pages: int
    wall_s: float
    ready: int
    failed: int
    cpu_s: dict[str, float]
    machine: dict[str, float]

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label, "documents": self.documents, "pages": self.pages,
            "wall_s": round(self.wall_s, 3), "pages_per_s": round(self.pages_per_s, 2),
            "ready": self.ready, "failed": self.failed, "cpu_s": self.cpu_s,
            "cpu_s_per_page": {k: round(v / max(self.pages, 1), 5) for k, v in self.cpu_s.items()},
            "machine": self.machine,
        }


def corpus(folders: tuple[str, ...] = DEFAULT_FOLDERS, limit: int | None = None) -> list[Path]:
    root = shared_data() / "pdfs"
    files = [p for folder in folders for p in sorted((root / folder).glob("*.pdf")) if p.name not in EXCLUDED]
    return files[:limit] if limit else files


def page_count(path: Path) -> int:
    pdf = pypdfium2.PdfDocument(path)
    try:
        return len(pdf)
    finally:
        pdf.close()


def child_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_process(files: list[Path], store: Path) -> IngestRun:
    """`treerag index` of every file into an empty embedded store."""
    if cli_has_index():
        command = [sys.executable, "-m", "treerag", "index", *map(str, files), "--store", str(store)]
        label = "one process (treerag index)"
    else:
        logger.warning("`treerag index` is not available; indexing in one process with bench.index_in_process")
        command = [sys.executable, "-m", "bench.index_in_process", str(store), *map(str, files)]
        label = "one process (index_pdf)"
    machine = MachineCpu().start()
    cpu0, start = child_cpu_seconds(), time.perf_counter()
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - start
    cpu = child_cpu_seconds() - cpu0
    if result.returncode != 0:
        raise RuntimeError(f"`treerag index` failed ({result.returncode}):\n{result.stderr[-3000:]}")
    pages = sum(page_count(p) for p in files)
    return IngestRun(label, len(files), pages, wall, len(files), 0, {"one process": round(cpu, 3)}, machine.stop())


def cli_has_index() -> bool:
    return (REPO / "treerag" / "commands" / "index.py").exists()


def interpreter_start_s() -> float:
    """What starting `treerag` costs before any PDF is read (included in the one-process wall)."""
    start = time.perf_counter()
    command = ["-m", "treerag", "--help"] if cli_has_index() else ["-c", "import services.indexer.pipeline"]
    subprocess.run([sys.executable, *command], cwd=REPO, capture_output=True, check=True)
    return time.perf_counter() - start


async def upload(client: httpx.AsyncClient, path: Path) -> str:
    response = await client.post("/v1/documents", files={"file": (path.name, path.read_bytes(), "application/pdf")})
    if response.status_code != 202:
        raise RuntimeError(f"upload of {path.name} answered {response.status_code}: {response.text[:500]}")
    return response.json()["doc_id"]


async def statuses(client: httpx.AsyncClient, doc_ids: set[str]) -> dict[str, dict[str, Any]]:
    """Records of the given documents: one listing request when the gateway lists them all."""
    response = await client.get("/v1/documents")
    if response.status_code == 200:
        body = response.json()
        listed = body if isinstance(body, list) else body.get("documents", body.get("items", []))
        found = {r["doc_id"]: r for r in listed if isinstance(r, dict) and r.get("doc_id") in doc_ids}
        if len(found) == len(doc_ids):
            return found
    replies = await asyncio.gather(*(client.get(f"/v1/documents/{d}") for d in doc_ids))
    return {d: r.json() for d, r in zip(doc_ids, replies, strict=True) if r.status_code == 200}


async def wait_terminal(
    client: httpx.AsyncClient, doc_ids: list[str], timeout_s: float, poll_s: float = POLL_S
) -> tuple[dict[str, dict[str, Any]], float]:
    """Poll until every document is ready or failed; return their records and when the last one got there.

    Polling is light (one listing request every `poll_s`) so that it takes no CPU from the indexers;
    the end time is therefore known to within `poll_s`.
    """
    pending: set[str] = set(doc_ids)
    done: dict[str, dict[str, Any]] = {}
    last = time.perf_counter()
    deadline = time.monotonic() + timeout_s
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} documents not ready after {timeout_s:.0f}s")
        for doc_id, record in (await statuses(client, pending)).items():
            if record.get("status") in ("ready", "failed"):
                done[doc_id] = record
                pending.discard(doc_id)
                last = time.perf_counter()
        if pending:
            await asyncio.sleep(poll_s)
    return done, last


async def through_bus(stack: BusStack, files: list[Path], label: str, timeout_s: float = 1800) -> tuple[IngestRun, dict[str, str]]:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        cpu_before = stack.cpu_by_stage()
        machine = MachineCpu().start()
        start = time.perf_counter()
        doc_ids = [await upload(client, path) for path in files]
        records, last = await wait_terminal(client, doc_ids, timeout_s)
        wall = last - start
        machine_use = machine.stop()
        cpu = cpu_delta(cpu_before, stack.cpu_by_stage())
    failed = [d for d, r in records.items() if r["status"] == "failed"]
    for doc_id in failed:
        logger.warning("document failed through the bus: %s", records[doc_id])
    pages = sum(page_count(p) for p in files)
    ids = {path.name: doc_id for path, doc_id in zip(files, doc_ids, strict=True)}
    return IngestRun(label, len(files), pages, wall, len(files) - len(failed), len(failed), cpu, machine_use), ids


def warm_up_pdf(folder: Path) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    for n in range(2):
        pdf.add_page()
        pdf.set_font("Helvetica", size=14)
        pdf.cell(0, 10, f"Warm-up section {n + 1}")
        pdf.ln(12)
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, "This page only brings every consumer group to a steady state. " * 8)
    path = folder / "warm-up.pdf"
    pdf.output(str(path))
    return path


async def warm_up(stack: BusStack, folder: Path) -> None:
    async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=120.0) as client:
        await wait_terminal(client, [await upload(client, warm_up_pdf(folder))], 180)


@contextmanager
def indexed_stack(run_dir: Path, name: str, files: list[Path],
                  stage_env: dict[str, dict[str, str]] | None = None) -> Iterator[tuple[BusStack, dict[str, str]]]:
    """Kafka, FerretDB and one process of each stage (database `bench_<name>_<time>`; `stage_env`:
    settings of a stage's own), warmed up and with `files` indexed through the gateway: the stack
    and file name -> doc id. Everything is stopped on the way out."""
    stack = BusStack(run_dir, stage_env=stage_env or {})
    stack.start_infra()
    try:
        stack.start_services(f"bench_{name}_{int(time.time())}", indexers=1)
        try:
            asyncio.run(warm_up(stack, stack.run_dir))
            _, doc_ids = asyncio.run(through_bus(stack, files, f"index for {name}"))
            yield stack, doc_ids
        finally:
            stack.stop_services()
    finally:
        stack.stop_infra()


def run(
    stack: BusStack, files: list[Path], indexer_counts: tuple[int, ...], store: Path, keep_last: bool = False
) -> dict[str, Any]:
    """One-process indexing into the embedded store at `store` (kept: the query benchmark's floor
    reads it), then the bus with each indexer count; leaves the last bus stack running (with its
    documents) when `keep_last`, for the query benchmark."""
    runs: list[IngestRun] = []
    startup = interpreter_start_s()
    logger.info("one process: treerag index of %d files", len(files))
    runs.append(one_process(files, store))
    last_ids: dict[str, str] = {}
    for count in indexer_counts:
        database = f"bench_ingest_{count}_{int(time.time())}"
        stack.start_services(database, indexers=count)
        try:
            stack.wait_indexers_assigned()
            asyncio.run(warm_up(stack, stack.run_dir))
            logger.info("bus: %d indexer(s), %d files", count, len(files))
            result, last_ids = asyncio.run(through_bus(stack, files, f"bus, {count} indexer{'s' if count > 1 else ''}"))
            runs.append(result)
            write_result("bus_ingest", {"files": [p.name for p in files], "runs": [r.as_dict() for r in runs]})
        finally:
            if not (keep_last and count == indexer_counts[-1]):
                stack.stop_services()
    baseline = runs[0].pages_per_s
    summary = {
        "files": [p.name for p in files],
        "treerag_start_s": round(startup, 3),
        "runs": [r.as_dict() for r in runs],
        "bus_vs_one_process": {r.label: round(r.pages_per_s / baseline, 3) for r in runs[1:]} if baseline else {},
    }
    by_count = {c: r for c, r in zip(indexer_counts, runs[1:], strict=True)}
    if 1 in by_count and 2 in by_count and by_count[1].pages_per_s:
        summary["two_vs_one_indexer"] = round(by_count[2].pages_per_s / by_count[1].pages_per_s, 3)
    summary["doc_ids"] = last_ids
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N PDFs of the corpus")
    parser.add_argument("--indexers", default="1,2", help="indexer process counts to run (default 1,2)")
    parser.add_argument("--run-dir", type=Path, default=Path(tempfile.gettempdir()) / "treerag-bench")
    args = parser.parse_args(argv)
    configure_bench_logging()
    files = corpus(limit=args.limit)
    stack = BusStack(args.run_dir)
    stack.start_infra()
    try:
        with tempfile.TemporaryDirectory(prefix="treerag-bench-") as tmp:
            result = run(stack, files, tuple(int(x) for x in args.indexers.split(",")), Path(tmp) / "store")
    finally:
        stack.stop_infra()
    result.pop("doc_ids", None)
    write_result("bus_ingest", result)
    for entry in result["runs"]:
        print(f"{entry['label']:32} {entry['pages']:5d} pages  {entry['wall_s']:8.2f} s  {entry['pages_per_s']:8.2f} pages/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
