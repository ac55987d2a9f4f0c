"""Word vectors for the verifier's substitution check, from the configured `Embedder`."""

from __future__ import annotations

from functools import lru_cache

from shared.adapters.embeddings.factory import make_embedder
from shared.ports.model_roles import Embedder
from shared.settings import Settings, get_settings
from shared.text.substitution import WordVectors


def word_vectors(settings: Settings | None = None) -> WordVectors | None:
    """None when embeddings are off. The verifier uses them only with a fit made for the same
    embedder (`shared/text/grounding_fit.json`); with another it scores lexically."""
    embedder = make_embedder(settings or get_settings())
    return None if embedder is None else _memoised(embedder)


@lru_cache(maxsize=4)
def _memoised(embedder: Embedder) -> WordVectors:
    # One memo of word vectors per loaded embedder, shared by every request of the process.
    return WordVectors(embedder)
