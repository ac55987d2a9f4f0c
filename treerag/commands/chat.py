"""`treerag chat [--doc ID ...]`: a conversation in the terminal over the local store.

Each line is a question; a follow-up ("And in 2017?", "what about Nike?", "its revenue") is
completed from the one before it, as the gateway's chats complete it (shared/app/chats.py),
and the completed question is shown before the answer. An empty line or end of input stops.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from services.navigator.index_cache import NoDocumentsError
from shared.adapters.cache import AnswerCache
from shared.adapters.embedded.store import EmbeddedRepository
from shared.app.chats import follow
from shared.model.query import QuerySettings
from shared.settings import get_settings
from treerag.commands.ask import render
from treerag.engine import QueryEngine, QueryFailedError

PROMPT = "? "


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("chat", help="A conversation over the indexed documents: follow-ups are understood.")
    parser.add_argument("--doc", action="append", default=None, metavar="ID",
                        help="Talk about this document only (doc id, id prefix or file name); repeatable.")
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    parser.set_defaults(func=run)


async def converse(engine: QueryEngine, lines: Iterable[str], out: TextIO, thread_docs: list[str],
                   interactive: bool = False) -> int:
    """Answer each line in turn; how many were answered."""
    previous: str | None = None
    previous_docs: list[str] = []
    answered = 0
    for line in lines:
        question = line.strip()
        if not question:
            break
        turn = follow(question, previous, previous_docs, thread_docs)
        if turn.rewrite.rewritten:
            print(f"(asked: {turn.rewrite.question})", file=out)
        try:
            result = await engine.ask(turn.rewrite.question, turn.doc_ids or None, QuerySettings())
        except (NoDocumentsError, QueryFailedError, ValueError) as exc:
            print(f"error: {exc}", file=out)
            continue
        print(render(result), file=out)
        print(file=out)
        answered += 1
        previous = turn.rewrite.question
        previous_docs = sorted(dict.fromkeys(c.doc_id for c in result.answer.citations)) or list(turn.doc_ids)
        if interactive:
            print(PROMPT, end="", file=out, flush=True)
    return answered


def run(args: argparse.Namespace) -> int:
    if not args.store.is_dir():
        print(f"error: no store at {args.store}: index documents first (treerag index FILE --store {args.store})",
              file=sys.stderr)
        return 2
    interactive = sys.stdin.isatty()

    async def main() -> int:
        repository = EmbeddedRepository(args.store)
        try:
            engine = QueryEngine(repository, answer_cache=AnswerCache(repository))
            if interactive:
                print("Ask a question (an empty line ends the chat).", file=sys.stdout)
                print(PROMPT, end="", flush=True)
            return await converse(engine, sys.stdin, sys.stdout, args.doc or [], interactive)
        finally:
            await repository.close()

    asyncio.run(main())
    return 0
