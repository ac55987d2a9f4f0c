"""`treerag ask "QUESTION"`: answer from the indexed documents, with page citations."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from services.navigator.index_cache import NoDocumentsError
from services.navigator.ranking.model import ModelFileError
from shared.adapters.cache import AnswerCache
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.errors import LLMConfigError, LLMError
from shared.adapters.reranker import RerankerModelError
from shared.model.query import QuerySettings
from shared.settings import get_settings
from treerag.engine import QueryEngine, QueryFailedError
from treerag.llm_options import HOW_TO_CONFIGURE, add_llm_arguments, make_cli_llm
from treerag.pipeline import AskResult


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
    parser.add_argument(
        "--no-cache", action="store_true",
        help="Answer afresh: neither read nor write the answer cache nor the stored model replies.",
    )
    add_llm_arguments(parser)
    parser.add_argument(
        "--llm-scoring", action="store_true", help="Rank tree nodes with the model too (needs a model)."
    )
    parser.set_defaults(func=run)


# What stands above an answer whose sentences are the closest passages, not the figure asked for.
NOT_STATED = "No passage states the figure asked for. The closest passages:"


class AskUsageError(ValueError):
    """The options cannot work together; the message says what to change."""


def render(result: AskResult) -> str:
    answer = result.answer
    lines = [answer.answer, ""]
    if not answer.stated and not answer.abstained:
        lines = [NOT_STATED, *lines]
    if answer.citations:
        lines.append("Citations:")
        for citation in answer.citations:
            pages = ", ".join(str(p) for p in citation.pages)
            lines.append(f"  - {citation.file_name or citation.doc_id}, p. {pages} (section {citation.node_id})")
    lines.append(f"Confidence: {answer.confidence:.2f}" + ("  (abstained)" if answer.abstained else "")
                 + (f"  {answer.assessment}" if answer.assessment else ""))
    lines.append(f"Answered by: {result.generator}" + ("  (from the answer cache)" if result.cached else ""))
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
        f"(navigate {t.navigate_ms:.1f} of which loading {t.load_ms:.1f}, compress {t.compress_ms:.1f}, verify {t.verify_ms:.1f})"
    )
    return "\n".join(lines)


async def _ask(args: argparse.Namespace) -> AskResult:
    llm = make_cli_llm(args, args.store, persist_replies=not args.no_cache)
    if args.llm_scoring and llm is None:
        raise AskUsageError(f"--llm-scoring needs a model: {HOW_TO_CONFIGURE}")
    repository = EmbeddedRepository(args.store)
    try:
        cache = None if args.no_cache else AnswerCache(repository)
        engine = QueryEngine(repository, llm=llm, answer_cache=cache)
        settings = QuerySettings(mode=args.mode, llm_scoring=args.llm_scoring)
        return await engine.ask(args.question, args.doc, settings)
    finally:
        await repository.close()


def run(args: argparse.Namespace) -> int:
    try:
        result = asyncio.run(_ask(args))
    except (NoDocumentsError, QueryFailedError, LLMConfigError, RerankerModelError, ModelFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        if not isinstance(exc.__cause__, LLMError):
            raise
        # The model could not write the answer, after its retries.
        print(f"error: {exc}. Retry later, or ask offline with --llm off.", file=sys.stderr)
        return 1
    print(result.model_dump_json(indent=2) if args.json else render(result))
    return 0
