"""Document records and the result of indexing one PDF."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from shared.model.card import DocumentCard
from shared.model.clock import utc_now
from shared.model.formats import DocumentFormat
from shared.model.text_layer import TextLayer
from shared.model.tree import TreeNode


class BuilderName(StrEnum):
    OUTLINE = "outline"
    LAYOUT = "layout"
    WINDOWS = "windows"
    LLM = "llm"


class DocumentStatus(StrEnum):
    UPLOADED = "uploaded"
    INDEXING = "indexing"
    READY = "ready"
    FAILED = "failed"
    # Set by the one update that starts a deletion: from then on no read path serves the
    # document, while what was made from it is removed (the record goes last).
    DELETING = "deleting"


class DocumentRecord(BaseModel):
    doc_id: str = Field(description="SHA-256 of the file's bytes (hex, first 16 chars).")
    file_name: str
    format: DocumentFormat = Field(
        default=DocumentFormat.PDF,
        description="pdf, or docx/html/markdown/text: their pages are text only (no page image).",
    )
    title: str = ""
    page_count: int = 0
    builder: BuilderName | None = None
    build_seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    status: DocumentStatus = DocumentStatus.UPLOADED
    reason: str | None = Field(default=None, description="Why indexing failed, when it did.")
    tenant: str = "default"
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    version: int = Field(default=1, description="Bumped whenever the tree is rebuilt.")
    pages_digest: str = Field(
        default="", description="The digest of the stored page texts (`pages_digest`), set when they are stored: "
        "a page analysis with the same digest describes them without their being read. Empty for records stored "
        "before it was kept.",
    )
    card: DocumentCard | None = Field(
        default=None, description="What the document is, whose and of which period; None for records "
        "indexed before cards were read, or imported.",
    )
    uploaded_by: str | None = Field(
        default=None, max_length=300,
        description="Who uploaded it, as the gateway knows the caller: `key:<key id>` or `user:<subject>`; "
        "None when it was indexed by the CLI, with authentication off, or before uploaders were kept.",
    )


class DocumentTree(BaseModel):
    doc_id: str
    nodes: list[TreeNode]


# Stored vectors: half precision keeps cosines within ~1e-3 at half the bytes of float32.
VECTOR_DTYPE = np.dtype("<f2")


def _packed(vectors: np.ndarray, dimension: int) -> bytes:
    matrix = np.asarray(vectors, dtype=np.float32).reshape(-1, dimension)
    return matrix.astype(VECTOR_DTYPE).tobytes()


def _unpacked(data: bytes, dimension: int) -> np.ndarray:
    return np.frombuffer(data, dtype=VECTOR_DTYPE).reshape(-1, dimension).astype(np.float32)


# What a stored node vector embeds (`shared/adapters/embeddings/document.py`).
SECTION_TEXT = "section_path"
TITLE_TEXT = "title_summary"


class DocumentEmbeddings(BaseModel):
    """Unit vectors of one document's pages and tree nodes, from one embedding model.

    Rows are packed as little-endian float16 bytes (`VECTOR_DTYPE`): 512 bytes per page at 256
    dimensions. Vectors of different `model`s are never compared."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    doc_id: str
    model: str = Field(description="The `Embedder.name` that computed the vectors.")
    dimension: int = Field(ge=1)
    node_ids: list[str] = Field(default_factory=list, description="Tree node id of each node vector row.")
    page_vectors: bytes = Field(default=b"", description="pages x dimension; row i is physical page i + 1.")
    node_vectors: bytes = Field(default=b"", description="len(node_ids) x dimension, in node_ids order.")
    node_text: str = Field(
        default=TITLE_TEXT,
        description=f"What a node vector embeds: {SECTION_TEXT!r} (its path's titles and its summary) or "
        f"{TITLE_TEXT!r} (its title and summary, in vectors stored before).",
    )

    @classmethod
    def from_arrays(
        cls, doc_id: str, model: str, pages: np.ndarray, node_ids: list[str], nodes: np.ndarray,
        node_text: str = TITLE_TEXT,
    ) -> DocumentEmbeddings:
        dimension = int(pages.shape[1] if pages.ndim == 2 and pages.size else nodes.shape[1])
        return cls(
            doc_id=doc_id, model=model, dimension=dimension, node_ids=list(node_ids),
            page_vectors=_packed(pages, dimension), node_vectors=_packed(nodes, dimension), node_text=node_text,
        )

    @property
    def page_count(self) -> int:
        return len(self.page_vectors) // (VECTOR_DTYPE.itemsize * self.dimension)

    def page_matrix(self) -> np.ndarray:
        """float32, one row per page."""
        return _unpacked(self.page_vectors, self.dimension)

    def node_matrix(self) -> np.ndarray:
        """float32, one row per entry of `node_ids`."""
        return _unpacked(self.node_vectors, self.dimension)


class IndexedDocument(BaseModel):
    """Everything one indexing run produces: stored as record, pages, tree, vectors and page
    analysis. In JSON the analysis bytes are base64, as the vectors are."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    record: DocumentRecord
    pages: list[str] = Field(description="Page text; pages[0] is physical page 1.")
    tree: DocumentTree
    embeddings: DocumentEmbeddings | None = Field(
        default=None, description="Page and node vectors; None when embeddings are off."
    )
    analysis: bytes | None = Field(
        default=None,
        description="The page analysis (shared/text/page_analysis.py): the term ids of every page, "
        "sentence and header and the page features, packed as opaque bytes the navigator loads "
        "instead of tokenising the pages again; None when it was not computed.",
    )
    text_layers: list[TextLayer] = Field(
        default_factory=list,
        description="The words of the pages recognised by OCR, with their boxes (Tesseract's), so "
        "that a viewer can select and highlight them; pages with a text layer of their own have "
        "none here (their words are read from the PDF).",
    )
