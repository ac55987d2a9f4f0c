"""Why an embedding backend could not be loaded."""

from __future__ import annotations


class EmbeddingsConfigError(RuntimeError):
    """The configured backend cannot load: a missing package or model. The message says what to
    install or set; `TREERAG_EMBEDDINGS=off` always works."""
