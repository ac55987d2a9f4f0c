"""`treerag export DOC --format pageindex|treerag`: a stored tree in another system's format."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from shared.model.interop import TreeFormatError, export_pageindex, export_treerag_index
from shared.settings import get_settings
from treerag.commands.tree import load_document


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("export", help="Export a document's tree as PageIndex or TreeRAG JSON.")
    parser.add_argument("document", metavar="DOC_ID_OR_FILENAME")
    parser.add_argument("--format", choices=["pageindex", "treerag"], required=True)
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    parser.add_argument("--out", type=Path, help="Write to this file instead of standard output.")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    found = asyncio.run(load_document(args.store, args.document))
    if isinstance(found, str):
        print(f"error: {found}", file=sys.stderr)
        return 1
    record, tree = found
    try:
        if args.format == "pageindex":
            payload = export_pageindex(tree, record.file_name)
        else:
            payload = export_treerag_index(tree, record.title or record.file_name)
    except TreeFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0
