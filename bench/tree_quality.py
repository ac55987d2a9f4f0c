"""Tree quality, measured: how close the outline-blind trees come to a reference structure.

(i) PDFs with an outline (the R manuals): the layout builder (outline ignored) against the PDF's
    own bookmarks. (ii) the PageIndex PDFs (no outline): our default tree against the tree
    PageIndex built with GPT-4o (`*_structure.json`).

Titles are compared normalised (case, spacing, punctuation, leading section numbers); a title
counts once per occurrence. Start-page accuracy is over matched titles.

    python -m bench.tree_quality [--refman]   ->  bench/results/tree_quality.json
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, shared_data, write_result
from services.indexer.extract import extract_content, open_document, read_outline
from services.indexer.pipeline import IndexOptions, index_pdf
from shared.model.tree import walk_tree
from shared.text.normalize import title_key

TARGET_F1 = 0.80
TARGET_START_ACCURACY = 0.95
R_MANUALS = ("R-intro.pdf", "R-data.pdf", "R-admin.pdf", "R-FAQ.pdf")
_NUMBERING = re.compile(r"^(\d+(\.\d+)*|[a-z]\.\d+(\.\d+)*|(chapter|appendix|part|section) \S+)( |$)")


def comparable(title: str) -> str:
    key = title_key(title)
    return _NUMBERING.sub("", key, count=1).strip() or key


Entry = tuple[str, int, str]  # (comparable title, start page, original title)


def match(reference: list[Entry], predicted: list[Entry]) -> dict[str, Any]:
    """Greedy one-to-one matching of equal titles, nearest start page first."""
    free: dict[str, list[Entry]] = defaultdict(list)
    for entry in predicted:
        free[entry[0]].append(entry)
    pairs: list[tuple[Entry, Entry]] = []
    missed: list[Entry] = []
    for ref in reference:
        options = free.get(ref[0])
        if not options:
            missed.append(ref)
            continue
        best = min(options, key=lambda e: abs(e[1] - ref[1]))
        options.remove(best)
        pairs.append((ref, best))
    extra = [e for group in free.values() for e in group]
    matched = len(pairs)
    precision = matched / len(predicted) if predicted else 0.0
    recall = matched / len(reference) if reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    exact = sum(1 for ref, got in pairs if ref[1] == got[1])
    wrong_pages = sorted(
        ((ref, got) for ref, got in pairs if ref[1] != got[1]), key=lambda p: -abs(p[0][1] - p[1][1])
    )
    return {
        "reference_titles": len(reference),
        "predicted_titles": len(predicted),
        "matched": matched,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "title_f1": round(f1, 3),
        "start_page_accuracy": round(exact / matched, 3) if matched else 0.0,
        "worst_mistakes": {
            "wrong_start_page": [
                {"title": ref[2], "reference_page": ref[1], "our_page": got[1]} for ref, got in wrong_pages[:5]
            ],
            "missed_titles": [{"title": m[2], "page": m[1]} for m in missed[:8]],
            "extra_titles": [{"title": e[2], "page": e[1]} for e in extra[:8]],
        },
        "_counts": (matched, len(predicted), len(reference), exact),
    }


def _our_entries(path: Path, builder: str) -> tuple[list[Entry], dict[str, Any]]:
    started = time.perf_counter()
    indexed = index_pdf(path.read_bytes(), path.name, IndexOptions(builder=builder))  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    nodes = list(walk_tree(indexed.tree.nodes))
    entries = [(comparable(n.title), n.page_start, n.title) for n in nodes]
    info = {
        "builder": indexed.record.builder,
        "pages": indexed.record.page_count,
        "nodes": len(nodes),
        "verified_share": round(sum(n.verified for n in nodes) / len(nodes), 3) if nodes else 0.0,
        "seconds": round(seconds, 2),
    }
    return entries, info


def _outline_entries(path: Path) -> list[Entry]:
    pdf = open_document(path.read_bytes(), 100_000)
    try:
        extract_content(pdf, with_layout=False)  # loads the page tree: outline lookups are then fast
        return [(comparable(e.title), e.page, e.title) for e in read_outline(pdf) if e.page is not None]
    finally:
        pdf.close()


def _pageindex_entries(structure: dict[str, Any]) -> list[Entry]:
    entries: list[Entry] = []

    def walk(nodes: list[dict[str, Any]]) -> None:
        for node in nodes:
            entries.append((comparable(node["title"]), int(node["start_index"]), node["title"]))
            walk(node.get("nodes") or [])

    walk(structure.get("structure") or [])
    return entries


def _aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    matched = sum(r["_counts"][0] for r in rows)
    predicted = sum(r["_counts"][1] for r in rows)
    reference = sum(r["_counts"][2] for r in rows)
    exact = sum(r["_counts"][3] for r in rows)
    precision = matched / predicted if predicted else 0.0
    recall = matched / reference if reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "documents": len(rows),
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "title_f1": round(f1, 3),
        "start_page_accuracy": round(exact / matched, 3) if matched else 0.0,
    }


def run(include_refman: bool = False) -> dict[str, Any]:
    data = shared_data()
    manuals = list(R_MANUALS) + (["refman.pdf"] if include_refman else [])
    outline_rows: dict[str, dict[str, Any]] = {}
    for name in manuals:
        path = data / "pdfs" / "r-manuals" / name
        predicted, info = _our_entries(path, "layout")
        outline_rows[name] = {**info, **match(_outline_entries(path), predicted)}
    pageindex_rows: dict[str, dict[str, Any]] = {}
    for structure_path in sorted((data / "pdfs" / "pageindex").glob("*_structure.json")):
        pdf_path = structure_path.with_name(structure_path.name.removesuffix("_structure.json") + ".pdf")
        if not pdf_path.is_file():
            continue
        reference = _pageindex_entries(json.loads(structure_path.read_text()))
        predicted, info = _our_entries(pdf_path, "auto")
        pageindex_rows[pdf_path.name] = {**info, **match(reference, predicted)}

    r_summary = _aggregate([outline_rows[n] for n in R_MANUALS])
    result = {
        "method": "titles normalised (case, spacing, punctuation, leading numbering); one-to-one "
        "matching of equal titles; start-page accuracy over matched titles",
        "r_manuals_layout_vs_outline": {
            "summary": r_summary,
            "targets": {"title_f1": TARGET_F1, "start_page_accuracy": TARGET_START_ACCURACY},
            "meets_targets": r_summary["title_f1"] >= TARGET_F1
            and r_summary["start_page_accuracy"] >= TARGET_START_ACCURACY,
            "documents": outline_rows,
        },
        "pageindex_ours_vs_gpt4o": {
            "summary": _aggregate(list(pageindex_rows.values())),
            "documents": pageindex_rows,
        },
    }
    for rows in (outline_rows, pageindex_rows):
        for row in rows.values():
            row.pop("_counts")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refman", action="store_true", help="also the 2,415-page reference manual")
    args = parser.parse_args()
    configure_bench_logging()
    result = write_result("tree_quality", run(args.refman))
    for section in ("r_manuals_layout_vs_outline", "pageindex_ours_vs_gpt4o"):
        print(section, json.dumps(result[section]["summary"]))
        for name, row in result[section]["documents"].items():
            print(f"  {name}: F1 {row['title_f1']} start-page acc {row['start_page_accuracy']} "
                  f"({row['matched']}/{row['reference_titles']} ref, {row['predicted_titles']} ours)")


if __name__ == "__main__":
    main()
