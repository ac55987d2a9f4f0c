"""`treerag ask "QUESTION"`: answer from the indexed documents, with page citations."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from shared.query import QuerySettings
from shared.settings import get_settings
from shared.store.embedded import EmbeddedRepository
from treerag.pipeline import AskResult, NoDocumentsError, QueryEngine


def register(subparsers: argparse._SubParsersAction) -> None:
    settings = get_settings()
    parser = subparsers.add_parser("ask", help="Answer a question from the indexed documents, citing pages.")
    parser.add_argument("question", help="The question, in quotes.")
    parser.add_argument(
        "--doc", action="append", default=None, metavar="ID",
        help="Ask only this document (doc id, unique id prefix or file name); repeatable. Default: route over all.",
    )
    parser.add_argument("--mode", choices=["dfs", "beam", "auto"], default="auto", help="Tree navigation strategy.")
    parser.add_argument("--store", type=Path, default=settings.store_dir, help="Store folder (default ./data).")
    parser.add_argument("--json", action="store_true", help="Print the full result as JSON.")
    parser.set_defaults(func=run)


def render(result: AskResult) -> str:
    answer = result.answer
    lines = [answer.answer, ""]
    if answer.citations:
        lines.append("Citations:")
        for citation in answer.citations:
            pages = ", ".join(str(p) for p in citation.pages)
            lines.append(f"  - {citation.file_name or citation.doc_id}, p. {pages} (section {citation.node_id})")
    lines.append(f"Confidence: {answer.confidence:.2f}" + ("  (abstained)" if answer.abstained else ""))
    for warning in result.warnings:
        lines.append(f"Warning: {warning}")
    s = result.stats
    lines.append(
        f"Traversal: {result.mode} ({result.mode_reason}); {s.nodes_visited} nodes visited, "
        f"{s.nodes_selected} selected, {s.references_resolved} references resolved, "
        f"{s.documents_shortlisted}/{s.documents_considered} documents; {s.elapsed_ms:.1f} ms"
    )
    t = result.timings
    lines.append(
        f"Context: {result.tokens_before} -> {result.tokens_after} tokens; total {t.total_ms:.1f} ms "
        f"(load {t.load_ms:.1f}, navigate {t.navigate_ms:.1f}, compress {t.compress_ms:.1f}, verify {t.verify_ms:.1f})"
    )
    return "\n".join(lines)


async def _ask(args: argparse.Namespace) -> AskResult:
    repository = EmbeddedRepository(args.store)
    try:
        engine = QueryEngine(repository)
        return await engine.ask(args.question, args.doc, QuerySettings(mode=args.mode))
    finally:
        await repository.close()


def run(args: argparse.Namespace) -> int:
    try:
        result = asyncio.run(_ask(args))
    except (NoDocumentsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.model_dump_json(indent=2) if args.json else render(result))
    return 0
