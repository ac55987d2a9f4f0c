"""Dense similarity of a question to pages and to the sections enclosing them.

Vectors come from the `Embedder` the stage's composition root loaded (`NavigatorModels.embedder`;
wordllama by default: weights inside its wheel, no download). Page vectors the indexer stored
with the document are used when the same model made them; otherwise pages are embedded when
the index is prepared. The shipped model was fitted with one embedder (`fitted_on.embeddings`);
with another one, or with embeddings off (no embedder), the dense features are zeros and the
lexical model (`model-lexical.json`, fitted the same way with these features at zero) ranks
instead.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from shared.adapters.embeddings.document import section_text
from shared.ports.model_roles import Embedder
from shared.text.question import asked_text

if TYPE_CHECKING:
    from services.navigator.index import DocumentIndex


def _embed(model: Embedder, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, model.dimension), dtype=np.float32)
    return np.nan_to_num(np.asarray(model.embed(texts), dtype=np.float32))


def question_vector(question: str, model: Embedder | None) -> np.ndarray:
    """The question's unit vector (a single zero without an embedder)."""
    if model is None:
        return np.zeros(1, dtype=np.float32)
    return _question_vector(model, asked_text(question))  # type: ignore[arg-type]  # embedders hash by identity


@lru_cache(maxsize=4096)
def _question_vector(model: Embedder, question: str) -> np.ndarray:
    vector = _embed(model, [question])[0]
    vector.flags.writeable = False
    return vector


def page_vectors(index: DocumentIndex, model: Embedder | None) -> np.ndarray:
    """One unit vector per page (zeros without an embedder), cached with the index per model."""
    if model is None:
        return np.zeros((len(index.pages), 1), dtype=np.float32)
    stored = index.dense
    if stored is not None and stored.model == model.name and stored.pages.shape[0] == len(index.pages):
        return stored.pages
    return index.derive(f"page_vectors:{model.name}", lambda: _embed(model, list(index.pages)))


def section_vectors(index: DocumentIndex, model: Embedder | None) -> np.ndarray:
    """One unit vector per node: its title path (every ancestor's title) and its summary; the
    stored node vectors when the same model made them of that text."""
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
