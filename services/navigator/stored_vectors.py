"""A document's stored vectors, aligned with its index: one row per page, one per flattened node.

Similarities are dot products of unit vectors (cosines). Vectors of another model than the
question's, or of another tree than the index's, are not used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from shared.adapters.logs import log_fields
from shared.model.documents import SECTION_TEXT, DocumentEmbeddings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DenseVectors:
    model: str
    pages: np.ndarray  # float32 (pages, dimension); row i is physical page i + 1
    nodes: np.ndarray  # float32 (flattened nodes, dimension); zero rows for nodes without a vector
    # Every node has a stored vector of its section text (`embeddings.document.section_text`).
    sections: bool = False

    @property
    def dimension(self) -> int:
        return int(self.pages.shape[1])

    @classmethod
    def aligned(cls, embeddings: DocumentEmbeddings, node_ids: list[str], page_count: int) -> DenseVectors | None:
        """The vectors laid out as the index's pages and nodes; None when they were computed
        for other page text (a different page count)."""
        if embeddings.page_count != page_count:
            logger.warning(
                "stored vectors do not match the page text; ignored (re-index the document)",
                extra=log_fields(doc_id=embeddings.doc_id, vectors=embeddings.page_count, pages=page_count),
            )
            return None
        stored = embeddings.node_matrix()
        if embeddings.node_ids == node_ids:
            # Vectors of this very tree (what indexing stores): already in the index's order.
            nodes, matched = stored, len(node_ids)
        else:
            row_of = {node_id: row for row, node_id in enumerate(embeddings.node_ids)}
            nodes = np.zeros((len(node_ids), embeddings.dimension), dtype=np.float32)
            rows = [(i, row_of[n]) for i, n in enumerate(node_ids) if n in row_of]
            if rows:
                mine, theirs = map(list, zip(*rows, strict=True))
                nodes[mine] = stored[theirs]
            matched = len(rows)
        sections = embeddings.node_text == SECTION_TEXT and matched == len(node_ids)
        return cls(model=embeddings.model, pages=embeddings.page_matrix(), nodes=nodes, sections=sections)

    def similarities(self, matrix: np.ndarray, question_vector: np.ndarray) -> np.ndarray | None:
        vector = np.asarray(question_vector, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.dimension:
            return None
        return (matrix @ vector).astype(np.float64)
