"""`treerag index FILE.pdf ...`: index PDFs into the embedded store, with a progress bar."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from tqdm import tqdm

from services.indexer.errors import PdfError
from services.indexer.pipeline import IndexOptions, content_id, index_pdf
from shared.settings import get_settings
from shared.store.embedded import EmbeddedRepository
from shared.tree import walk_tree

logger = logging.getLogger("treerag.index")


def register(subparsers: argparse._SubParsersAction) -> None:
    settings = get_settings()
    parser = subparsers.add_parser("index", help="Index PDF files into the store.")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE.pdf")
    parser.add_argument("--store", type=Path, default=settings.store_dir, help="Store folder (default ./data).")
    parser.add_argument(
        "--builder",
        choices=["auto", "outline", "layout", "windows", "llm"],
        default="auto",
        help="auto: the PDF's outline if it has one, else heading detection; layout ignores the outline.",
    )
    parser.add_argument(
        "--domain",
        choices=["general", "medical", "legal", "financial", "academic"],
        default="general",
        help="Document domain: selects the prompt template of the llm builder.",
    )
    parser.add_argument("--max-pages", type=int, default=settings.max_pages, help="Refuse longer PDFs.")
    parser.add_argument("--force", action="store_true", help="Rebuild documents already in the store.")
    parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
    parser.set_defaults(func=run)


def _llm_client(builder: str) -> object | None:
    """The configured model client (TREERAG_LLM), for the llm and auto builders; None offline."""
    if builder not in ("llm", "auto"):
        return None
    from shared.llm.factory import make_llm

    try:
        return make_llm(get_settings())
    except Exception as exc:  # a misconfigured model must not stop offline indexing
        print(f"warning: no model client ({exc}); indexing offline", file=sys.stderr)
        return None


async def _index_all(args: argparse.Namespace) -> int:
    repo = EmbeddedRepository(args.store)
    options = IndexOptions(builder=args.builder, max_pages=args.max_pages, domain=args.domain)
    llm = _llm_client(args.builder)
    failed = 0
    quiet = args.no_progress or not sys.stderr.isatty()
    files = tqdm(args.files, desc="files", unit="file", file=sys.stderr, disable=quiet, position=0)
    for path in files:
        name = path.name
        try:
            data = path.read_bytes()
        except OSError as exc:
            print(f"error: {path}: cannot read the file ({exc.strerror or exc}); check the path", file=sys.stderr)
            failed += 1
            continue
        doc_id = content_id(data)
        existing = await repo.get_document(doc_id)
        if (
            existing is not None
            and not args.force
            and existing.status == "ready"
            and args.builder in ("auto", existing.builder)
        ):
            print(f"{name}: already indexed as {doc_id} ({existing.page_count} pages, {existing.builder})")
            continue
        pages_bar = tqdm(desc=name[:30], unit="page", file=sys.stderr, disable=quiet, leave=False, position=1)
        try:
            indexed = index_pdf(data, name, options, llm=llm, progress=pages_bar.update)
        except PdfError as exc:
            pages_bar.close()
            print(f"error: {path}: {exc}", file=sys.stderr)
            failed += 1
            continue
        pages_bar.close()
        if existing is not None:
            indexed.record.created_at = existing.created_at
            indexed.record.version = existing.version + 1
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
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_index_all(args))
