"""`treerag`: the one-process command line. Each subcommand lives in treerag/commands/."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from shared.logs import configure_logging

# Subcommand modules; each exposes `register(subparsers) -> None` and sets `func` on its parser.
COMMANDS = ("index", "tree", "ask", "eval", "export", "import_tree")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="treerag", description="Page-aware section trees for PDFs, and cited answers over them."
    )
    parser.add_argument("--log-level", default="WARNING", help="Log level for the JSON logs on stderr.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"treerag.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"treerag.commands.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level.upper())
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        logging.getLogger("treerag").warning("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`treerag tree X | head`): stop quietly, as Unix tools do.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
