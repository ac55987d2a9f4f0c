"""Dense similarity of a question to pages and to the sections enclosing them.

Vectors come from the configured `Embedder` (`TREERAG_EMBEDDINGS`, `shared/adapters/embeddings`;
wordllama by default: weights inside its wheel, no download). Page vectors the indexer stored
with the document are used when the same model made them; otherwise pages are embedded when
the index is prepared. The shipped model was fitted with one embedder (`fitted_on.embeddings`);
with another one, or with embeddings off, the dense features are zeros and the lexical model
(`model-lexical.json`, fitted the same way with these features at zero) ranks instead.
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from shared.adapters.embeddings import EmbeddingsConfigError, make_embedder
from shared.adapters.embeddings.document import section_text
from shared.ports.model_roles import Embedder
from shared.settings import Settings
from shared.text.question import asked_text

if TYPE_CHECKING:
    from services.navigator.index import DocumentIndex

logger = logging.getLogger(__name__)


# The environment variables of the settings that choose the embedder.
_VARIABLES = tuple(f"TREERAG_{name.upper()}" for name in Settings.model_fields if name.startswith("embeddings"))


def embedder() -> Embedder | None:
    """The configured embedder (loaded once per configuration), or None when embeddings are off
    or the backend cannot load (logged; ranking goes on lexically)."""
    # Reading the settings costs more than a query's look-ups: they are read again only when
    # one of the embeddings variables changes.
    return _configured(tuple((name, os.environ.get(name)) for name in _VARIABLES))


@lru_cache(maxsize=8)
def _configured(_variables: tuple[tuple[str, str | None], ...]) -> Embedder | None:
    try:
        return make_embedder()
    except EmbeddingsConfigError as exc:
        logger.warning("embeddings unavailable; dense ranking features are off: %s", exc)
        return None


def embedder_name() -> str | None:
    model = embedder()
    return model.name if model is not None else None


def _embed(model: Embedder, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, model.dimension), dtype=np.float32)
    return np.nan_to_num(np.asarray(model.embed(texts), dtype=np.float32))


def question_vector(question: str) -> np.ndarray:
    model = embedder()
    if model is None:
        return np.zeros(1, dtype=np.float32)
    return _question_vector(model, asked_text(question))  # type: ignore[arg-type]  # embedders hash by identity


@lru_cache(maxsize=4096)
def _question_vector(model: Embedder, question: str) -> np.ndarray:
    vector = _embed(model, [question])[0]
    vector.flags.writeable = False
    return vector


def page_vectors(index: DocumentIndex) -> np.ndarray:
    """One unit vector per page (zeros when embeddings are off), cached with the index per model."""
    model = embedder()
    if model is None:
        return np.zeros((len(index.pages), 1), dtype=np.float32)
    stored = index.dense
    if stored is not None and stored.model == model.name and stored.pages.shape[0] == len(index.pages):
        return stored.pages
    return index.derive(f"page_vectors:{model.name}", lambda: _embed(model, list(index.pages)))


def section_vectors(index: DocumentIndex) -> np.ndarray:
    """One unit vector per node: its title path (every ancestor's title) and its summary; the
    stored node vectors when the same model made them of that text."""
    model = embedder()
    if model is None:
        return np.zeros((len(index.nodes), 1), dtype=np.float32)
    stored = index.dense
    if stored is not None and stored.model == model.name and stored.sections:
        return stored.nodes

    def build() -> np.ndarray:
        texts = []
        for flat in index.nodes:
            titles = [index.nodes[a].node.title for a in index.path(flat.index)] + [flat.node.title]
            texts.append(section_text(titles, flat.node.summary))
        return _embed(model, texts)

    return index.derive(f"section_vectors:{model.name}", build)
