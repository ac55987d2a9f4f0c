"""`treerag delete DOC`: remove a document and everything made from it from the store."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.memory.bus import InMemoryBus
from shared.adapters.memory.queries import InMemoryQueryStore
from shared.app.deletion import delete_document, finish_deletion, finish_interrupted
from shared.model.documents import DocumentRecord
from shared.settings import get_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "delete", help="Delete a document: its PDF, pages, tree, record and cached answers citing it."
    )
    parser.add_argument("document", metavar="DOC_ID", help="The doc id or a unique prefix of it (`treerag tree` lists them).")
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    parser.set_defaults(func=run)


def _by_id(records: list[DocumentRecord], key: str) -> list[DocumentRecord]:
    """Documents are deleted by id only: a file name is a label several documents may share."""
    return [r for r in records if r.doc_id == key] or [r for r in records if r.doc_id.startswith(key)]


async def _delete(store: Path, key: str) -> tuple[int, str]:
    repo = EmbeddedRepository(store)
    queries = InMemoryQueryStore()  # one process: nothing else stores queries
    try:
        # A deletion stopped midway (the process was killed) is finished first.
        resumed = await finish_interrupted(repo, queries)
        if key in resumed:
            return 0, f"deleted {key} (finishing a deletion that had stopped midway)"
        records = await repo.list_documents()
        matches = _by_id(records, key) if key else []
        if len(matches) != 1:
            named = [r for r in records if r.file_name == key]
            if len(matches) > 1:
                return 1, f"{key!r} is the start of {len(matches)} doc ids; give more of the id"
            if named:
                ids = ", ".join(r.doc_id for r in named)
                return 1, f"{key!r} is a file name, not a doc id; delete by id ({ids})"
            return 1, f"no document with id {key!r} in {store}; `treerag tree` lists the documents"
        # One process: no stage keeps anything in memory, so the event has nobody to tell, and
        # the rest is removed before returning.
        deletion = await delete_document(matches[0].doc_id, repo, queries, InMemoryBus())
        if deletion is None:
            return 1, f"document {matches[0].doc_id} was deleted meanwhile"
        await finish_deletion(deletion.record.doc_id, repo, queries)
        return 0, f"deleted {deletion.record.doc_id} ({deletion.record.file_name})"
    finally:
        await repo.close()


def run(args: argparse.Namespace) -> int:
    code, message = asyncio.run(_delete(args.store, args.document))
    print(message if code == 0 else f"error: {message}", file=sys.stdout if code == 0 else sys.stderr)
    return code
