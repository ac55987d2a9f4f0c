"""`treerag eval --dataset FILE.jsonl --pdfs DIR --out RESULTS.json`: every question through the
tree systems and the BM25 baselines in one run; writes RESULTS.json and RESULTS.md."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from shared.settings import get_settings
from shared.store.embedded import EmbeddedRepository
from treerag.evaluation.dataset import DatasetError, load_dataset
from treerag.evaluation.runner import (
    SYSTEMS,
    EvalReport,
    MissingDocumentError,
    ensure_indexed,
    evaluate,
    markdown_table,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    settings = get_settings()
    parser = subparsers.add_parser("eval", help="Evaluate TreeRAG against BM25 baselines on a question set.")
    parser.add_argument("--dataset", type=Path, required=True, help="Questions, JSON Lines.")
    parser.add_argument("--pdfs", type=Path, required=True, help="Folder holding the PDFs the questions name.")
    parser.add_argument("--out", type=Path, required=True, help="RESULTS.json to write (RESULTS.md beside it).")
    parser.add_argument("--store", type=Path, default=settings.store_dir, help="Store folder (default ./data).")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"Comma-separated subset of: {', '.join(SYSTEMS)}."
    )
    parser.add_argument("--items", action="store_true", help="Also write per-question scores (RESULTS.items.json).")
    parser.set_defaults(func=run)


async def run_eval(
    dataset: Path, pdfs: Path, store: Path, systems: tuple[str, ...] = SYSTEMS
) -> EvalReport:
    items = load_dataset(dataset)
    repository = EmbeddedRepository(store)
    try:
        bundles = await ensure_indexed(repository, [item.doc for item in items], pdfs)
    finally:
        await repository.close()
    return evaluate(dataset.stem, items, bundles, systems=systems)


def write_report(report: EvalReport, out: Path, with_items: bool = False) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report.results.model_dump(), indent=2) + "\n", encoding="utf-8")
    table = out.with_suffix(".md")
    table.write_text(markdown_table(report.results), encoding="utf-8")
    if with_items:
        items = {name: [s.model_dump() for s in scores] for name, scores in report.items.items()}
        out.with_suffix(".items.json").write_text(json.dumps(items, indent=1) + "\n", encoding="utf-8")
    return table


def run(args: argparse.Namespace) -> int:
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        print(f"error: unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}", file=sys.stderr)
        return 2
    try:
        report = asyncio.run(run_eval(args.dataset, args.pdfs, args.store, systems))
    except (DatasetError, MissingDocumentError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    table = write_report(report, args.out, args.items)
    print(markdown_table(report.results))
    print(f"wrote {args.out} and {table}")
    return 0
