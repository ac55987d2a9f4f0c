"""`treerag tree DOC`: print a stored document's section tree; without DOC, list the documents."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.card import DocType, DocumentCard
from shared.model.documents import DocumentRecord, DocumentTree
from shared.model.tree import TreeNode
from shared.settings import get_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tree", help="Print a document's section tree (no DOC: list documents).")
    parser.add_argument("document", metavar="DOC_ID_OR_FILENAME", nargs="?")
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    parser.add_argument("--json", action="store_true", help="The tree in TreeRAG's schema, as JSON.")
    parser.set_defaults(func=run)


async def load_document(store: Path, key: str) -> tuple[DocumentRecord, DocumentTree] | str:
    """The record and tree for an id, id prefix or file name; or a one-line reason."""
    repo = EmbeddedRepository(store)
    try:
        record = await repo.find_document(key)
        if record is None:
            known = await repo.list_documents()
            if not known:
                return f"no documents in {store}; index some with `treerag index FILE.pdf --store {store}`"
            return f"no single document matches {key!r} in {store}; `treerag tree` takes a doc id, id prefix or file name"
        tree = await repo.get_tree(record.doc_id)
        if tree is None:
            return f"document {record.doc_id} ({record.file_name}) has no tree yet (status {record.status}); index it again"
        return record, tree
    finally:
        await repo.close()


def format_card(card: DocumentCard) -> list[str]:
    """A few lines on what the document is: type, issuer, subject, period, language, labels."""
    facts = [("type", card.doc_type.value if card.doc_type is not DocType.UNKNOWN else ""),
             ("issuer", card.issuer), ("subject", card.subject), ("period", card.period.describe()),
             ("cover dates", ", ".join(d.isoformat() for d in card.dates[:4])), ("language", card.language)]
    labelled = [label for label in card.page_labels if label]
    if labelled:
        facts.append(("printed pages", f"{labelled[0]} … {labelled[-1]}"))
    shown = [f"{name}: {value}" for name, value in facts if value]
    # Three facts a line keeps each line short enough for a terminal.
    return ["  " + " · ".join(shown[i : i + 3]) for i in range(0, len(shown), 3)]


def format_tree(nodes: list[TreeNode], indent: int = 0) -> list[str]:
    lines = []
    for node in nodes:
        mark = "✓" if node.verified else "✗"
        lines.append(f"{'  ' * indent}{mark} {node.title}  [{node.page_label}]  #{node.id}")
        lines.extend(format_tree(node.children, indent + 1))
    return lines


async def _list_documents(store: Path) -> list[DocumentRecord]:
    repo = EmbeddedRepository(store)
    try:
        return await repo.list_documents()
    finally:
        await repo.close()


def _print_documents(store: Path) -> int:
    records = asyncio.run(_list_documents(store))
    if not records:
        print(f"error: no documents in {store}; index some with `treerag index FILE.pdf --store {store}`",
              file=sys.stderr)
        return 1
    for record in records:
        print(f"{record.doc_id}  {record.file_name}  {record.page_count} pages  "
              f"{record.builder or 'imported'}  {record.status}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.document is None:
        return _print_documents(args.store)
    found = asyncio.run(load_document(args.store, args.document))
    if isinstance(found, str):
        print(f"error: {found}", file=sys.stderr)
        return 1
    record, tree = found
    if args.json:
        print(tree.model_dump_json(indent=2))
        return 0
    print(f"{record.title or record.file_name}  ({record.file_name}, {record.doc_id}, "
          f"{record.page_count} pages, {record.builder or 'imported'} tree)")
    if record.card is not None:
        for line in format_card(record.card):
            print(line)
    for line in format_tree(tree.nodes, 1):
        print(line)
    return 0
