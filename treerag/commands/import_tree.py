"""`treerag import FILE.json --format pageindex|treerag`: store a tree built elsewhere.

The pages are not part of those formats; when the PDF was indexed before (same doc id), its
page text stays, and the imported tree is checked against it.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from pathlib import Path

from services.indexer.verify import verify_tree
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.interop import TreeFormatError, import_pageindex, import_treerag_index
from shared.model.tree import walk_tree
from shared.settings import get_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("import", help="Import a PageIndex or TreeRAG JSON tree into the store.")
    parser.add_argument("file", type=Path, metavar="FILE.json")
    parser.add_argument("--format", choices=["pageindex", "treerag"], required=True)
    parser.add_argument("--doc-id", help="Document id (default: a hash of the JSON file).")
    parser.add_argument("--file-name", help="File name to record (default: the PDF name in the JSON, or FILE).")
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    parser.set_defaults(func=run)


async def _import(args: argparse.Namespace) -> int:
    try:
        raw = args.file.read_bytes()
        data = json.loads(raw)
    except OSError as exc:
        print(f"error: {args.file}: cannot read the file ({exc.strerror or exc})", file=sys.stderr)
        return 1
    except json.JSONDecodeError as exc:
        print(f"error: {args.file}: not JSON ({exc.msg} at line {exc.lineno}); pass a tree JSON file", file=sys.stderr)
        return 1
    doc_id = args.doc_id or hashlib.sha256(raw).hexdigest()[:16]
    try:
        if args.format == "pageindex":
            tree = import_pageindex(data, doc_id)
            default_name = str(data.get("doc_name") or args.file.name)
        else:
            tree = import_treerag_index(data, doc_id)
            default_name = args.file.name
    except (TreeFormatError, ValueError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1

    repo = EmbeddedRepository(args.store)
    try:
        pages = await repo.get_pages(doc_id)
        warnings = []
        if pages:
            tree.nodes = verify_tree(tree.nodes, pages)
        else:
            warnings.append("imported without page text: titles and page ranges are unverified")
        last_page = max((n.page_end for n in tree.nodes), default=0)
        existing = await repo.get_document(doc_id)
        record = DocumentRecord(
            doc_id=doc_id,
            file_name=args.file_name or (existing.file_name if existing else default_name),
            title=(existing.title if existing else "") or (tree.nodes[0].title if len(tree.nodes) == 1 else ""),
            page_count=len(pages) or last_page,
            builder=None,  # built by another system
            warnings=warnings,
            status=DocumentStatus.READY,
            version=existing.version + 1 if existing else 1,
        )
        await repo.put_tree(tree)
        await repo.put_document(record)
    finally:
        await repo.close()
    nodes = list(walk_tree(tree.nodes))
    print(f"{args.file.name}: imported as {doc_id} ({len(nodes)} sections, "
          f"{sum(n.verified for n in nodes)} verified against page text)")
    return 0


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_import(args))
