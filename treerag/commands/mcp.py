"""`treerag mcp [--store DIR]`: the tools for agents over stdio, on a local store.

An MCP client (Claude Desktop, Cursor, an agent framework) starts this command and calls the
tools ask, search_pages, verify, get_page, get_tree and list_documents over its stdin and stdout.
Logs go to stderr only: stdout carries the protocol.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.mcp_server import build_server
from shared.settings import get_settings
from treerag.desk import StoreDesk
from treerag.engine import QueryEngine


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mcp", help="Serve the tools for agents (MCP) over stdio on a local store.")
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.store.is_dir():
        raise SystemExit(f"no store at {args.store}: index documents first (treerag index FILE --store {args.store})")
    repository = EmbeddedRepository(args.store)
    desk = StoreDesk(repository, QueryEngine(repository))

    async def desk_for(_: Any) -> StoreDesk:
        return desk

    build_server(desk_for).run("stdio")
    return 0
