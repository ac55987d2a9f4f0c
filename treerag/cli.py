"""`treerag`: the one-process command line. Each subcommand lives in treerag/commands/."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from shared.adapters.logs import configure_logging
from shared.extras import MissingExtraError, missing_extra

# Subcommand modules; each exposes `register(subparsers) -> None` and sets `func` on its parser.
COMMANDS = ("index", "upload", "tree", "ask", "verify", "delete", "eval", "export", "import_tree", "keys", "mcp", "chat")


def _requested_command(argv: list[str]) -> str | None:
    """The subcommand named on the command line, so only its module (and its imports) loads."""
    tokens = iter(argv)
    for token in tokens:
        if token == "--log-level":
            next(tokens, None)
        elif not token.startswith("-"):
            name = "import_tree" if token == "import" else token
            return name if name in COMMANDS else None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="treerag", description="Page-aware section trees for PDFs, and cited answers over them."
    )
    parser.add_argument("--log-level", default="WARNING", help="Log level for the JSON logs on stderr.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    requested = _requested_command(sys.argv[1:] if argv is None else argv)
    for name in (requested,) if requested else COMMANDS:
        try:
            module = importlib.import_module(f"treerag.commands.{name}")
        except ModuleNotFoundError as exc:
            extra = missing_extra(exc)
            if exc.name != f"treerag.commands.{name}" and extra is None:
                raise
            if extra is not None and name == requested:
                parser.exit(2, f"treerag {name}: {MissingExtraError('this command', extra)}\n")
            continue  # listed only when what it needs is installed
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
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
