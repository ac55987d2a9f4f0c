"""Ingestion speed: the whole `treerag index` command, as a user runs it.

Each run is a fresh process with a fresh store (so imports, extraction, tree, verification,
summaries and storing are all counted). Pages/s is reported against wall time and against the
process's own CPU time: the latter is the one-core throughput, which other load on a shared
machine does not distort. Extraction alone is also compared between pypdfium2 and pypdf. refman.pdf is indexed with the
default embeddings (page and node vectors computed and stored) and with `TREERAG_EMBEDDINGS=off`,
so the cost of the vectors shows on its own.

    python -m bench.ingest   ->  bench/results/ingest.json
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, configure_bench_logging, shared_data, write_result

TARGET_REFMAN = 300.0
# With page and node vectors computed at ingestion (issue 10).
TARGET_REFMAN_EMBEDDINGS = 250.0
TARGET_LAYOUT = 100.0
R_MANUALS = ("R-intro.pdf", "R-data.pdf", "R-admin.pdf", "R-FAQ.pdf")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_index(files: list[Path], builder: str, embeddings: str | None = None) -> dict[str, Any]:
    """One `treerag index` process over `files`; pages counted from the stored records.
    `embeddings`: the TREERAG_EMBEDDINGS backend (None = the configured default)."""
    with tempfile.TemporaryDirectory(prefix="treerag-bench-") as store:
        command = [
            sys.executable, "-m", "treerag", "index", *map(str, files),
            "--store", store, "--builder", builder, "--no-progress",
        ]
        cpu_before = _children_cpu()
        started = time.perf_counter()
        env = {**os.environ, **({"TREERAG_EMBEDDINGS": embeddings} if embeddings else {})}
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False, env=env)
        wall = time.perf_counter() - started
        cpu = _children_cpu() - cpu_before
        if done.returncode != 0:
            raise RuntimeError(f"treerag index failed ({done.returncode}): {done.stderr.strip()[-400:]}")
        records = [json.loads(p.read_text()) for p in Path(store, "documents").glob("*.json")]
        vector_bytes = sum(p.stat().st_size for p in Path(store).glob("embeddings/*"))
    pages = sum(r["page_count"] for r in records)
    return {
        "files": [f.name for f in files],
        "builder": builder,
        "embeddings": embeddings or os.environ.get("TREERAG_EMBEDDINGS", "default"),
        "vector_bytes": vector_bytes,
        "builders_used": sorted({r["builder"] for r in records}),
        "pages": pages,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "pages_per_s_wall": round(pages / wall, 1),
        "pages_per_s_cpu": round(pages / cpu, 1) if cpu else None,
    }


def startup_cost() -> dict[str, float]:
    """A `treerag` process that indexes nothing: interpreter start and imports."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "treerag", "index", "--help"], cwd=REPO,
                   capture_output=True, check=True)
    return {"wall_s": round(time.perf_counter() - started, 2), "cpu_s": round(_children_cpu() - cpu_before, 2)}


def extraction_only(path: Path) -> dict[str, Any]:
    """Text of every page, nothing else: the two candidate libraries on the same PDF."""
    import pypdf
    import pypdfium2 as pdfium

    data = path.read_bytes()
    started = time.process_time()
    pdf = pdfium.PdfDocument(data)
    for index in range(len(pdf)):
        page = pdf[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    pages = len(pdf)
    pdf.close()
    pdfium_s = time.process_time() - started

    started = time.process_time()
    reader = pypdf.PdfReader(io.BytesIO(data))
    for page in reader.pages:
        page.extract_text()
    pypdf_s = time.process_time() - started
    return {
        "file": path.name,
        "pages": pages,
        "pypdfium2_pages_per_s": round(pages / pdfium_s, 1),
        "pypdf_pages_per_s": round(pages / pypdf_s, 1),
    }


def run() -> dict[str, Any]:
    folder = shared_data() / "pdfs" / "r-manuals"
    refman = run_index([folder / "refman.pdf"], "auto")
    refman_plain = run_index([folder / "refman.pdf"], "auto", embeddings="off")
    manuals_layout = run_index([folder / name for name in R_MANUALS], "layout")
    refman_layout = run_index([folder / "refman.pdf"], "layout")
    extraction = extraction_only(folder / "R-intro.pdf")
    startup = startup_cost()
    for row in (refman, refman_plain, manuals_layout, refman_layout):
        work = row["cpu_s"] - startup["cpu_s"]
        row["pages_per_s_cpu_after_startup"] = round(row["pages"] / work, 1) if work > 0 else None
    # This machine against the one where pypdfium2 extracted ~1,300 pages/s (the figure).
    slowdown = 1300 / extraction["pypdfium2_pages_per_s"]
    return {
        "startup": startup,
        "machine_slowdown_vs_reference": round(slowdown, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpu_count": os.cpu_count(),
        "refman_auto": refman,
        "refman_auto_embeddings_off": refman_plain,
        "r_manuals_layout": manuals_layout,
        "refman_layout": refman_layout,
        "extraction_only": extraction,
        "targets": {
            "refman_auto_pages_per_s": TARGET_REFMAN,
            "refman_auto_with_embeddings_pages_per_s": TARGET_REFMAN_EMBEDDINGS,
            "r_manuals_layout_pages_per_s": TARGET_LAYOUT,
        },
        "meets_targets_cpu": {
            "refman_auto": (refman["pages_per_s_cpu"] or 0) >= TARGET_REFMAN,
            "refman_auto_with_embeddings": (refman["pages_per_s_cpu"] or 0) >= TARGET_REFMAN_EMBEDDINGS,
            "r_manuals_layout": (manuals_layout["pages_per_s_cpu"] or 0) >= TARGET_LAYOUT,
        },
        "meets_targets_wall": {
            "refman_auto": refman["pages_per_s_wall"] >= TARGET_REFMAN,
            "refman_auto_with_embeddings": refman["pages_per_s_wall"] >= TARGET_REFMAN_EMBEDDINGS,
            "r_manuals_layout": manuals_layout["pages_per_s_wall"] >= TARGET_LAYOUT,
        },
    }


def main() -> None:
    configure_bench_logging()
    result = write_result("ingest", run())
    for key in ("refman_auto", "refman_auto_embeddings_off", "r_manuals_layout", "refman_layout"):
        row = result[key]
        print(f"{key}: {row['pages']} pages, {row['pages_per_s_wall']} pages/s wall, "
              f"{row['pages_per_s_cpu']} pages/s CPU ({row['wall_s']} s wall, {row['cpu_s']} s CPU), "
              f"{row['pages_per_s_cpu_after_startup']} pages/s CPU after startup")
    print("startup:", result["startup"], "slowdown vs reference:", result["machine_slowdown_vs_reference"])
    print("extraction only:", json.dumps(result["extraction_only"]))
    print("load average:", result["load_average_1m"])


if __name__ == "__main__":
    main()
