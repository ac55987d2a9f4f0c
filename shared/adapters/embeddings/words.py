"""Word vectors for the verifier's substitution check, from the configured `Embedder`."""

from __future__ import annotations

import logging
from functools import lru_cache

from shared.adapters.embeddings.errors import EmbeddingsConfigError
from shared.adapters.embeddings.factory import make_embedder
from shared.ports.model_roles import Embedder
from shared.settings import Settings, get_settings
from shared.text.substitution import WordVectors

logger = logging.getLogger(__name__)


def word_vectors(settings: Settings | None = None) -> WordVectors | None:
    """None when embeddings are off or the backend cannot load (logged; the verifier then
    scores lexically, as the navigator ranks). The verifier uses the vectors only with a fit
    made for the same embedder (`shared/text/grounding_fit.json`); with another it scores
    lexically too."""
    try:
        embedder = make_embedder(settings or get_settings())
    except EmbeddingsConfigError as exc:
        logger.warning("embeddings unavailable; the verifier scores replaced words lexically: %s", exc)
        return None
    return None if embedder is None else _memoised(embedder)  # type: ignore[arg-type]  # embedders hash by identity


@lru_cache(maxsize=4)
def _memoised(embedder: Embedder) -> WordVectors:
    # One memo of word vectors per loaded embedder, shared by every request of the process.
    return WordVectors(embedder)
