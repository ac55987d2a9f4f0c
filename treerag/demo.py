"""`python -m treerag.demo --store DIR`: print every stored tree (compact), then answer a few
questions about the sample PDFs (the project's own documentation) with page citations, and one
question they cannot answer, to show an abstention.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from services.navigator.index_cache import NoDocumentsError
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import DocumentStatus
from shared.model.query import QuerySettings
from shared.model.tree import TreeNode, count_nodes
from shared.settings import get_settings
from treerag.commands.ask import render
from treerag.engine import QueryEngine

QUESTIONS = (
    "How do I run the test suite?",
    "What does the navigator do with a question?",
    "How does the verifier check that an answer is grounded in the cited pages?",
    "Which Kubernetes operator does the project use for autoscaling?",  # not in the docs: abstains
)
TREE_DEPTH = 2
TREE_LINES = 25


def tree_lines(nodes: list[TreeNode], depth: int = TREE_DEPTH) -> list[str]:
    lines: list[str] = []

    def add(node: TreeNode, level: int) -> None:
        lines.append(f"{'  ' * level}- {node.title} ({node.page_label})")
        if level + 1 < depth:
            for child in node.children:
                add(child, level + 1)

    for root in nodes:
        add(root, 0)
    return lines


async def show_trees(repository: EmbeddedRepository) -> int:
    records = [r for r in await repository.list_documents() if r.status == DocumentStatus.READY]
    for record in records:
        tree = await repository.get_tree(record.doc_id)
        if tree is None:
            continue
        print(f"\n== {record.file_name}  [{record.doc_id}]  {record.page_count} pages, "
              f"{count_nodes(tree.nodes)} nodes, built by {record.builder}")
        lines = tree_lines(tree.nodes)
        print("\n".join(lines[:TREE_LINES]))
        if len(lines) > TREE_LINES:
            print(f"  ... {len(lines) - TREE_LINES} more lines (treerag tree {record.doc_id[:8]})")
    return len(records)


async def run(store: Path, questions: tuple[str, ...] = QUESTIONS) -> int:
    repository = EmbeddedRepository(store)
    try:
        if not await show_trees(repository):
            print(f"error: no indexed document in {store}; run `make demo` or `treerag index FILE.pdf` first",
                  file=sys.stderr)
            return 2
        engine = QueryEngine(repository)
        for question in questions:
            print(f"\n>>> {question}")
            try:
                result = await engine.ask(question, None, QuerySettings())
            except NoDocumentsError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(render(result))
        return 0
    finally:
        await repository.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m treerag.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder (default ./data).")
    args = parser.parse_args(argv)
    return asyncio.run(run(args.store))


if __name__ == "__main__":
    sys.exit(main())
