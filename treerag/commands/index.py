"""`treerag index FILE|DIR ...`: index PDFs and DOCX, HTML, Markdown and text files into the
embedded store (folders recursively, on `--workers N` processes), with a progress bar; what the
store holds already is skipped."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from tqdm import tqdm

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import EmbeddingsConfigError, make_embedder
from shared.adapters.llm.client import BaseLLMClient
from shared.adapters.llm.errors import LLMConfigError
from shared.settings import get_settings
from treerag.ingest.files import INDEXABLE_SUFFIXES, expand_paths
from treerag.ingest.indexing import FileIndexer, FileResult, cli_options, index_on_workers, triage
from treerag.llm_options import (
    HOW_TO_CONFIGURE,
    add_llm_arguments,
    make_cli_llm,
    usage_line,
)

logger = logging.getLogger("treerag.index")


def register(subparsers: argparse._SubParsersAction) -> None:
    settings = get_settings()
    parser = subparsers.add_parser("index", help="Index PDF, DOCX, HTML, Markdown and text files into the store.")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE|DIR",
                        help="Files, and folders to index every such file in (recursively).")
    parser.add_argument("--workers", type=int, default=1,
                        help="Processes indexing files side by side (default 1; up to one per core helps).")
    parser.add_argument("--store", type=Path, default=settings.store_dir, help="Store folder (default ./data).")
    parser.add_argument(
        "--builder",
        choices=["auto", "outline", "layout", "windows", "llm"],
        default="auto",
        help="auto: the PDF's outline if it has one, else the model when one is configured, else heading "
        "detection; layout ignores the outline; llm needs a model (--llm or TREERAG_LLM).",
    )
    parser.add_argument(
        "--domain",
        choices=["general", "medical", "legal", "financial", "academic"],
        default="general",
        help="Document domain: selects the prompt template of the llm builder.",
    )
    parser.add_argument("--max-pages", type=int, default=settings.max_pages, help="Refuse longer PDFs.")
    parser.add_argument("--force", action="store_true", help="Rebuild documents already in the store.")
    parser.add_argument(
        "--ocr", choices=["auto", "off"], default=settings.ocr,
        help="auto: recognise PDF pages without a text layer with Tesseract (default; TREERAG_OCR).",
    )
    parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
    add_llm_arguments(parser)
    parser.set_defaults(func=run)


class ModelRequiredError(RuntimeError):
    """`--builder llm` without a configured model."""


def _llm_client(args: argparse.Namespace) -> BaseLLMClient | None:
    """The configured model client for the llm and auto builders, its replies cached in the
    store; None offline. `--builder llm` without a usable model is an error; `auto` then
    indexes offline."""
    if args.builder not in ("llm", "auto"):
        return None
    try:
        llm = make_cli_llm(args, args.store)
    except LLMConfigError as exc:
        if args.builder == "llm":
            raise ModelRequiredError(str(exc)) from exc
        print(f"warning: no model client ({exc}); indexing offline", file=sys.stderr)
        return None
    if llm is None and args.builder == "llm":
        raise ModelRequiredError(f"--builder llm needs a model: {HOW_TO_CONFIGURE}")
    return llm


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    try:
        llm = _llm_client(args)
        embedder = make_embedder()
    except ModelRequiredError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EmbeddingsConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    paths = expand_paths(args.files)
    if not paths:
        print(f"error: no {'/'.join(INDEXABLE_SUFFIXES)} file in {', '.join(map(str, args.files))}", file=sys.stderr)
        return 1
    repo = EmbeddedRepository(args.store)
    quiet = args.no_progress or not sys.stderr.isatty()
    bar = tqdm(total=len(paths), desc="files", unit="file", file=sys.stderr, disable=quiet, position=0)
    counts = {"indexed": 0, "skipped": 0, "failed": 0}

    def report(result: FileResult) -> None:
        counts[result.outcome] += 1
        for line in result.out:
            bar.write(line, file=sys.stdout)
        for line in result.err:
            bar.write(line, file=sys.stderr)
        bar.update()

    sorted_out = triage(paths, repo, args.builder, args.force)
    for result in sorted_out.settled:
        report(result)
    jobs = sorted_out.jobs
    if args.workers > 1 and len(jobs) > 1:
        if llm is not None:
            llm = None  # each worker makes its own client (the usage line is per process)
        for result in index_on_workers(jobs, args, min(args.workers, len(jobs))):
            report(result)
    else:
        indexer = FileIndexer(args.store, cli_options(args), llm=llm, embedder=embedder)
        for job in jobs:
            pages = tqdm(desc=job.name[:30], unit="page", file=sys.stderr, disable=quiet, leave=False, position=1)
            result = indexer.index(job, progress=pages.update)
            pages.close()
            report(result)
    bar.close()
    if len(paths) > 1:
        print(f"{len(paths)} files: {counts['indexed']} indexed, {counts['skipped']} skipped, "
              f"{counts['failed']} failed")
    if llm is not None:
        print(usage_line(llm))
    return 1 if counts["failed"] else 0
