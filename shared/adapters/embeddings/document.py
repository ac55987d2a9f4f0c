"""The vectors stored with a document: one per page and one per tree node (title + summary)."""

from __future__ import annotations

import logging
import time

from shared.adapters.logs import log_fields
from shared.model.documents import DocumentEmbeddings
from shared.model.tree import TreeNode, walk_tree
from shared.ports.model_roles import Embedder

logger = logging.getLogger(__name__)


def node_text(node: TreeNode) -> str:
    """What a node's vector stands for: its title, then its summary."""
    return f"{node.title}\n{node.summary}".strip()


def embed_document(doc_id: str, pages: list[str], roots: list[TreeNode], embedder: Embedder) -> DocumentEmbeddings:
    """Page and node vectors in one `embed` call (a backend can share work across them)."""
    started = time.perf_counter()
    nodes = list(walk_tree(roots))
    vectors = embedder.embed(list(pages) + [node_text(n) for n in nodes])
    embeddings = DocumentEmbeddings.from_arrays(
        doc_id, embedder.name, vectors[: len(pages)], [n.id for n in nodes], vectors[len(pages) :]
    )
    logger.info(
        "embedded",
        extra=log_fields(doc_id=doc_id, model=embedder.name, pages=len(pages), nodes=len(nodes),
                         seconds=round(time.perf_counter() - started, 3)),
    )
    return embeddings
