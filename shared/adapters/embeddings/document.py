"""The vectors stored with a document: one per page and one per tree node (its section text:
the titles from the top of the tree down to it, then its summary), which the navigator's
ranking compares with the question."""

from __future__ import annotations

import logging
import time

from shared.adapters.logs import log_fields
from shared.model.documents import SECTION_TEXT, DocumentEmbeddings
from shared.model.tree import TreeNode
from shared.ports.model_roles import Embedder

logger = logging.getLogger(__name__)


def section_text(titles: list[str], summary: str) -> str:
    """What a node's vector stands for: the titles of its path, top first and its own last,
    then its summary."""
    return " / ".join(titles) + (f". {summary}" if summary else "")


def section_texts(roots: list[TreeNode]) -> list[tuple[TreeNode, str]]:
    """Every node in pre-order with its `section_text`."""
    out: list[tuple[TreeNode, str]] = []

    def visit(node: TreeNode, path: list[str]) -> None:
        titles = [*path, node.title]
        out.append((node, section_text(titles, node.summary)))
        for child in node.children:
            visit(child, titles)

    for root in roots:
        visit(root, [])
    return out


def embed_document(doc_id: str, pages: list[str], roots: list[TreeNode], embedder: Embedder) -> DocumentEmbeddings:
    """Page and node vectors in one `embed` call (a backend can share work across them)."""
    started = time.perf_counter()
    sections = section_texts(roots)
    vectors = embedder.embed(list(pages) + [text for _, text in sections])
    embeddings = DocumentEmbeddings.from_arrays(
        doc_id, embedder.name, vectors[: len(pages)], [n.id for n, _ in sections], vectors[len(pages) :],
        node_text=SECTION_TEXT,
    )
    logger.info(
        "embedded",
        extra=log_fields(doc_id=doc_id, model=embedder.name, pages=len(pages), nodes=len(sections),
                         seconds=round(time.perf_counter() - started, 3)),
    )
    return embeddings
