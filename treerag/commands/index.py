"""`treerag index FILE ...`: index PDFs and DOCX, HTML, Markdown and text files into the embedded
store, with a progress bar."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from tqdm import tqdm

from services.indexer.errors import DocumentError
from services.indexer.pipeline import IndexOptions, index_document
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import EmbeddingsConfigError, make_embedder
from shared.adapters.llm.client import BaseLLMClient
from shared.adapters.llm.errors import LLMConfigError
from shared.app.indexing import decide_indexing, next_version
from shared.model.file_names import FileNameError, file_name_label
from shared.model.ids import content_id
from shared.model.tree import walk_tree
from shared.settings import get_settings
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
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
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


async def _index_all(args: argparse.Namespace) -> int:
    try:
        llm = _llm_client(args)
    except ModelRequiredError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        embedder = make_embedder()
    except EmbeddingsConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    repo = EmbeddedRepository(args.store)
    settings = get_settings()
    options = IndexOptions(
        builder=args.builder, max_pages=args.max_pages, domain=args.domain,
        ocr=args.ocr, ocr_languages=settings.ocr_languages, ocr_workers=settings.ocr_workers,
    )
    failed = 0
    quiet = args.no_progress or not sys.stderr.isatty()
    files = tqdm(args.files, desc="files", unit="file", file=sys.stderr, disable=quiet, position=0)
    for path in files:
        try:
            name = file_name_label(path.name, fallback=path.name)
        except FileNameError as exc:
            print(f"error: {path!r}: {exc}", file=sys.stderr)
            failed += 1
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            print(f"error: {path}: cannot read the file ({exc.strerror or exc}); check the path", file=sys.stderr)
            failed += 1
            continue
        doc_id = content_id(data)
        existing = await repo.get_document(doc_id)
        if existing is not None and not decide_indexing(existing, args.builder, force=args.force).index:
            print(f"{name}: already indexed as {doc_id} ({existing.page_count} pages, {existing.builder})")
            continue
        pages_bar = tqdm(desc=name[:30], unit="page", file=sys.stderr, disable=quiet, leave=False, position=1)
        try:
            indexed = index_document(data, name, options, llm=llm, progress=pages_bar.update, embedder=embedder)
        except DocumentError as exc:
            pages_bar.close()
            print(f"error: {path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        pages_bar.close()
        indexed.record.version = next_version(existing, indexed.record)
        if existing is not None:
            indexed.record.created_at = existing.created_at
        await repo.put_pdf(doc_id, data)
        await repo.put_indexed(indexed)
        record = indexed.record
        nodes = sum(1 for _ in walk_tree(indexed.tree.nodes))
        verified = sum(1 for n in walk_tree(indexed.tree.nodes) if n.verified)
        print(
            f"{name}: {doc_id} {record.page_count} pages, {record.builder} tree, "
            f"{nodes} sections ({verified} verified), {record.build_seconds:.2f} s"
        )
        for warning in record.warnings:
            print(f"warning: {name}: {warning}", file=sys.stderr)
    await repo.close()
    if llm is not None:
        print(usage_line(llm))
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_index_all(args))
