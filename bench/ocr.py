"""OCR, measured on scanned copies of dev PDFs: accuracy, speed per core, and whether questions
over a scan are answered from the same pages as over the original.

Scans are made here: every page of the PDF rendered with pypdfium2 at `--dpi` (grey, as an office
scanner returns it) and re-wrapped as an image-only PDF. The indexer then reads the scan as it
reads any upload (TREERAG_OCR=auto: pages without a text layer go through Tesseract).

- character accuracy: 1 - edit distance / length of the original page's text (pdfium's text of
  the born-digital page), whitespace collapsed, over every page with text;
- CPU per page: this process (rendering) plus the tesseract processes, per recognised page; the
  text-layer extraction of the original is timed the same way for comparison;
- questions: the dev questions of the document, asked over the original and over the scan with
  the one-process engine; the first cited page is compared, and both against the gold pages;
- tree: the scan's tree (layout builder on OCR lines) against the original's bookmarks.
- `--rapidocr N`: RapidOCR (rapidocr-onnxruntime, when importable; not a dependency) on N pages of
  each document spread over its pages without dot leaders, against Tesseract on the same pages,
  for the engine comparison in docs/indexing.md.
- accuracy is reported over all pages, and apart for contents and index pages (dot leaders in
  the original text), which OCR reads as noise.

    python -m bench.ocr [--docs R-data.pdf,R-FAQ.pdf] [--dpi 300] [--low-dpi 200] [--rapidocr 6]
        -> bench/results/ocr.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2 as pdfium

from bench.common import configure_bench_logging, shared_data, write_result
from bench.tree_quality import Entry, comparable, match
from services.indexer.extract import extract_content, has_text, open_document, read_outline
from services.indexer.ocr import make_ocr
from services.indexer.pipeline import IndexOptions, index_document
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import IndexedDocument
from shared.model.query import QuerySettings
from shared.model.tree import walk_tree
from tests.support.pdfs import scanned_copy  # the scans the OCR tests index, so both measure the same
from treerag.engine import QueryEngine

TARGET_ACCURACY = 0.95
# Dot leaders of contents and index pages (". . . . 12" or "......12").
_LEADERS = re.compile(r"(?:\. ?){6,}")


def normalised(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time: an insertion chain along the row is a
    running minimum of (cost - column) + column."""
    if not a or not b:
        return max(len(a), len(b))
    source = np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32)
    target = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    columns = np.arange(len(b) + 1)
    previous = columns.copy()
    for i, code in enumerate(source):
        current = np.empty_like(previous)
        current[0] = i + 1
        current[1:] = np.minimum(previous[1:] + 1, previous[:-1] + (target != code))
        current = np.minimum.accumulate(current - columns) + columns
        previous = current
    return int(previous[-1])


def accuracy(recognised: str, original: str) -> float:
    truth, seen = normalised(original), normalised(recognised)
    return max(0.0, 1.0 - edit_distance(seen, truth) / max(len(truth), 1))


def bootstrap_ci(values: list[float], rounds: int = 2000, seed: int = 7) -> tuple[float, float]:
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(rounds))
    return round(means[int(0.025 * rounds)], 4), round(means[int(0.975 * rounds)], 4)


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def timed_index(data: bytes, name: str, ocr_mode: str) -> tuple[IndexedDocument, float, float]:
    """(indexed document, CPU seconds, wall seconds) of the whole indexing of `data`."""
    cpu, wall = _cpu(), time.perf_counter()
    indexed = index_document(data, name, IndexOptions(ocr=ocr_mode))  # type: ignore[arg-type]
    return indexed, _cpu() - cpu, time.perf_counter() - wall


def _rapidocr_pages(scan: bytes, indices: list[int], dpi: int) -> list[tuple[str, float]]:
    """(text, CPU seconds) of RapidOCR on the pages at `indices`; [] when it is not installed."""
    try:
        from rapidocr_onnxruntime import RapidOCR  # type: ignore[import-not-found]
    except ImportError:
        return []
    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
    pdf = pdfium.PdfDocument(scan)
    results = []
    for index in indices:
        image = np.array(pdf[index].render(scale=dpi / 72).to_pil().convert("RGB"))
        start = time.process_time()
        found, _ = engine(image)
        results.append(("\n".join(item[1] for item in found or []), time.process_time() - start))
    pdf.close()
    return results


async def _first_cited_pages(indexed: IndexedDocument, questions: list[dict[str, Any]], store: Path) -> list[list[int]]:
    repository = EmbeddedRepository(store)
    await repository.put_indexed(indexed)
    engine = QueryEngine(repository)
    cited = []
    for item in questions:
        result = await engine.ask(item["question"], [indexed.record.doc_id], QuerySettings())
        citations = result.answer.citations
        cited.append([] if result.answer.abstained or not citations else list(citations[0].pages))
    return cited


def _entries(indexed: IndexedDocument) -> list[Entry]:
    return [(comparable(n.title), n.page_start, n.title) for n in walk_tree(indexed.tree.nodes)]


def _outline(data: bytes) -> list[Entry]:
    pdf = open_document(data, 100_000)
    try:
        extract_content(pdf, with_layout=False)
        return [(comparable(e.title), e.page, e.title) for e in read_outline(pdf) if e.page is not None]
    finally:
        pdf.close()


def measure_document(path: Path, dpi: int, questions: list[dict[str, Any]], rapidocr_pages: int) -> dict[str, Any]:
    data = path.read_bytes()
    scan = scanned_copy(data, dpi)
    original_doc, text_cpu, _ = timed_index(data, path.name, "off")
    scanned_doc, ocr_cpu, ocr_wall = timed_index(scan, path.name, "auto")
    originals, recognised = original_doc.pages, scanned_doc.pages
    ocr_count = sum(1 for page in recognised if page.strip())
    scored = [i for i, page in enumerate(originals) if has_text(page)]
    accuracies = [accuracy(recognised[i], originals[i]) for i in scored]
    leaders = [i for i in scored if _LEADERS.search(originals[i])]
    row: dict[str, Any] = {
        "document": path.name, "pages": len(originals), "scan_dpi": dpi, "pages_recognised": ocr_count,
        "pages_scored": len(scored),
        "char_accuracy_mean": round(sum(accuracies) / len(accuracies), 4),
        "char_accuracy_min": round(min(accuracies), 4),
        "scored_pages": [i + 1 for i in scored],
        "accuracies": [round(a, 4) for a in accuracies],
        # Contents and index pages: dot leaders, which OCR reads as noise.
        "leader_pages": [i + 1 for i in leaders],
        # Whole indexing (OCR, tree, summaries) of the scan, and of the born-digital original.
        "ocr_index_cpu_s_per_page": round(ocr_cpu / max(ocr_count, 1), 3),
        "ocr_index_wall_s": round(ocr_wall, 1),
        "text_layer_index_cpu_s_per_page": round(text_cpu / len(originals), 5),
    }
    if questions:
        with tempfile.TemporaryDirectory() as folder:
            over_original = asyncio.run(_first_cited_pages(original_doc, questions, Path(folder) / "original"))
            over_scan = asyncio.run(_first_cited_pages(scanned_doc, questions, Path(folder) / "scan"))
        row["questions"] = [
            {"id": q["id"], "gold": q["evidence_pages"], "original": a, "scan": b}
            for q, a, b in zip(questions, over_original, over_scan, strict=True)
        ]
        quality = match(_outline(data), _entries(scanned_doc))
        row["tree_vs_outline"] = {k: quality[k] for k in ("precision", "recall", "title_f1", "start_page_accuracy")}
        row["scan_builder"] = scanned_doc.record.builder.value if scanned_doc.record.builder else None
    if rapidocr_pages:
        # Pages spread over the document, among those without dot leaders.
        prose = [i for i in scored if i not in leaders]
        picked = prose[:: max(1, len(prose) // rapidocr_pages)][:rapidocr_pages]
        rapid = _rapidocr_pages(scan, picked, 300)
        if rapid:
            rapid_scores = [accuracy(text, originals[i]) for i, (text, _) in zip(picked, rapid, strict=True)]
            tess_scores = [accuracy(recognised[i], originals[i]) for i in picked]
            row["engines_same_pages"] = {
                "pages": [i + 1 for i in picked],
                "tesseract_char_accuracy": round(sum(tess_scores) / len(tess_scores), 4),
                "rapidocr_char_accuracy": round(sum(rapid_scores) / len(rapid_scores), 4),
                "rapidocr_cpu_s_per_page": round(sum(cpu for _, cpu in rapid) / len(rapid), 3),
            }
    return row


def _accuracy_summary(accuracies: list[float]) -> dict[str, Any]:
    return {
        "pages": len(accuracies),
        "char_accuracy_mean": round(sum(accuracies) / len(accuracies), 4),
        "char_accuracy_median": round(sorted(accuracies)[len(accuracies) // 2], 4),
        "char_accuracy_ci95": bootstrap_ci(accuracies),
        "share_of_pages_at_or_above_target": round(sum(a >= TARGET_ACCURACY for a in accuracies) / len(accuracies), 3),
    }


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    accuracies = [a for row in rows for a in row["accuracies"]]
    pairs = [(page in row["leader_pages"], a) for row in rows for page, a in zip(row["scored_pages"], row["accuracies"],
                                                                                 strict=True)]
    recognised = sum(r["pages_recognised"] for r in rows)
    cpu = sum(r["ocr_index_cpu_s_per_page"] * r["pages_recognised"] for r in rows) / max(recognised, 1)
    text_cpu = sum(r["text_layer_index_cpu_s_per_page"] * r["pages"] for r in rows) / sum(r["pages"] for r in rows)
    summary: dict[str, Any] = {
        "all_pages": _accuracy_summary(accuracies),
        "pages_without_dot_leaders": _accuracy_summary([a for leader, a in pairs if not leader]),
        "contents_and_index_pages": _accuracy_summary([a for leader, a in pairs if leader]) if any(
            leader for leader, _ in pairs) else None,
        "target": TARGET_ACCURACY,
        "ocr_index_cpu_s_per_page": round(cpu, 3),
        "ocr_pages_per_s_per_core": round(1 / cpu, 3) if cpu else None,
        "text_layer_index_cpu_s_per_page": round(text_cpu, 5),
        "ocr_cost_vs_text_layer": round(cpu / text_cpu) if text_cpu else None,
    }
    asked = [q for r in rows for q in r.get("questions", [])]
    if asked:
        summary["questions"] = len(asked)
        summary["same_first_cited_page"] = round(sum(q["original"] == q["scan"] for q in asked) / len(asked), 3)
        summary["gold_hit_original"] = round(sum(bool(set(q["original"]) & set(q["gold"])) for q in asked) / len(asked), 3)
        summary["gold_hit_scan"] = round(sum(bool(set(q["scan"]) & set(q["gold"])) for q in asked) / len(asked), 3)
    return summary


def run(docs: list[str], dpi: int, low_dpi: int | None, rapidocr_pages: int) -> dict[str, Any]:
    data = shared_data()
    folder = data / "pdfs" / "r-manuals"
    questions = [json.loads(line) for line in (data / "qa" / "r-manuals-dev.jsonl").read_text().splitlines() if line]
    rows = [measure_document(folder / name, dpi, [q for q in questions if q["doc"] == name], rapidocr_pages)
            for name in docs]
    result: dict[str, Any] = {"engine": "tesseract", "ocr_workers": make_ocr("auto").workers,  # type: ignore[union-attr]
                              "documents": rows, "summary": _summary(rows)}
    if low_dpi:
        low = [measure_document(folder / docs[0], low_dpi, [], 0)]
        result["low_dpi"] = {"documents": low, "summary": _summary(low)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="R-data.pdf,R-FAQ.pdf", help="R manuals to scan (comma-separated).")
    parser.add_argument("--dpi", type=int, default=300)
    parser.add_argument("--low-dpi", type=int, default=200, help="Also scan the first document at this dpi (0: no).")
    parser.add_argument("--rapidocr", type=int, default=0,
                        help="Compare RapidOCR on this many pages per document (when it is importable).")
    args = parser.parse_args()
    configure_bench_logging()
    result = run(args.docs.split(","), args.dpi, args.low_dpi or None, args.rapidocr)
    write_result("ocr", result)
    print(json.dumps(result["summary"], indent=2))


if __name__ == "__main__":
    main()
