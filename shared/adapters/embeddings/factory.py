"""The configured `Embedder`, from `TREERAG_EMBEDDINGS` and its companion settings."""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from pathlib import Path

from shared.adapters.logs import log_fields
from shared.ports.model_roles import Embedder
from shared.settings import Settings, get_settings

logger = logging.getLogger(__name__)


def make_embedder(settings: Settings | None = None) -> Embedder | None:
    """None when embeddings are off. Raises `EmbeddingsConfigError` (saying what to install or
    set) when the chosen backend cannot load. Backends are imported only when chosen, and each
    configuration is loaded once per process (a model is read-only once loaded)."""
    settings = settings or get_settings()
    if settings.embeddings == "off":
        return None
    return _load(settings.embeddings, settings.embeddings_model, settings.embeddings_path, settings.embeddings_cache)


@lru_cache(maxsize=4)
def _load(backend: str, model: str | None, path: Path | None, cache: Path | None) -> Embedder:
    started = time.perf_counter()
    embedder: Embedder
    if backend == "wordllama":
        from shared.adapters.embeddings.wordllama_backend import WordLlamaEmbedder

        embedder = WordLlamaEmbedder()
    elif backend == "fastembed":
        from shared.adapters.embeddings.fastembed_backend import FastEmbedEmbedder

        embedder = FastEmbedEmbedder(model, path, cache)
    else:
        from shared.adapters.embeddings.sentence_transformers_backend import (
            SentenceTransformerEmbedder,
        )

        embedder = SentenceTransformerEmbedder(model, path, cache)
    logger.info("embedder loaded", extra=log_fields(model=embedder.name, dimension=embedder.dimension,
                                                   seconds=round(time.perf_counter() - started, 3)))
    return embedder
