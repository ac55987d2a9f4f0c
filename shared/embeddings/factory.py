"""The configured `Embedder`, from `TREERAG_EMBEDDINGS` and its companion settings."""

from __future__ import annotations

import logging
import time

from shared.logs import log_fields
from shared.ports import Embedder
from shared.settings import Settings, get_settings

logger = logging.getLogger(__name__)


def make_embedder(settings: Settings | None = None) -> Embedder | None:
    """None when embeddings are off. Raises `EmbeddingsConfigError` (saying what to install or
    set) when the chosen backend cannot load. Backends are imported only when chosen."""
    settings = settings or get_settings()
    started = time.perf_counter()
    embedder: Embedder
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "wordllama":
        from shared.embeddings.wordllama_backend import WordLlamaEmbedder

        embedder = WordLlamaEmbedder()
    elif settings.embeddings == "fastembed":
        from shared.embeddings.fastembed_backend import FastEmbedEmbedder

        embedder = FastEmbedEmbedder(settings.embeddings_model, settings.embeddings_path, settings.embeddings_cache)
    else:
        from shared.embeddings.sentence_transformers_backend import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder(
            settings.embeddings_model, settings.embeddings_path, settings.embeddings_cache
        )
    logger.info("embedder loaded", extra=log_fields(model=embedder.name, dimension=embedder.dimension,
                                                   seconds=round(time.perf_counter() - started, 3)))
    return embedder
