"""Dense similarity of a question to pages and to the sections enclosing them.

Vectors come from wordllama's 256-d static embeddings, whose weights ship inside its wheel (no
download, ~1 ms a question). `TREERAG_EMBEDDINGS=off`, or wordllama not installed, turns the
dense features into zeros; the ranking model then works on its other features (fit it the
lexical model, `model-lexical.json`, fitted the same way with these features at zero).
"""

from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from services.navigator.index import DocumentIndex

logger = logging.getLogger(__name__)

# Characters of a page embedded (static embeddings average tokens: the head of a long page
# carries its topic).
PAGE_CHARACTERS = 4000


class TextEmbedder(Protocol):
    def embed(self, texts: list[str], norm: bool = True) -> np.ndarray: ...


def enabled() -> bool:
    """Dense features are on unless `TREERAG_EMBEDDINGS=off` (the variable of `Settings.embeddings`)
    or wordllama is missing; read on every call, so a process can switch."""
    return os.environ.get("TREERAG_EMBEDDINGS", "wordllama").lower() != "off" and _wordllama() is not None


def embedder() -> TextEmbedder | None:
    return _wordllama() if enabled() else None


@lru_cache(maxsize=1)
def _wordllama() -> TextEmbedder | None:
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        logger.info("wordllama is not installed; dense ranking features are off")
        return None
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def _embed(texts: list[str]) -> np.ndarray:
    model = embedder()
    if model is None or not texts:
        return np.zeros((len(texts), 1), dtype=np.float32)
    # An empty text embeds to a zero vector, which normalising turns into NaNs.
    with np.errstate(invalid="ignore", divide="ignore"):
        vectors = model.embed(texts, norm=True)
    return np.nan_to_num(np.asarray(vectors, dtype=np.float32))


def question_vector(question: str) -> np.ndarray:
    return _question_vector(question) if enabled() else np.zeros(1, dtype=np.float32)


@lru_cache(maxsize=4096)
def _question_vector(question: str) -> np.ndarray:
    vector = _embed([question])[0]
    vector.flags.writeable = False
    return vector


def page_vectors(index: DocumentIndex) -> np.ndarray:
    """One unit vector per page (cached with the index; zeros when embeddings are off)."""
    if not enabled():
        return np.zeros((len(index.pages), 1), dtype=np.float32)
    cached = index.ranking_memo.get("page_vectors")
    if cached is None:
        cached = index.ranking_memo["page_vectors"] = _embed([p[:PAGE_CHARACTERS] for p in index.pages])
    return cached


def section_vectors(index: DocumentIndex) -> np.ndarray:
    """One unit vector per node: its title path (every ancestor's title) and its summary."""
    if not enabled():
        return np.zeros((len(index.nodes), 1), dtype=np.float32)
    cached = index.ranking_memo.get("section_vectors")
    if cached is None:
        texts = []
        for flat in index.nodes:
            titles = [index.nodes[a].node.title for a in index.path(flat.index)] + [flat.node.title]
            texts.append(" / ".join(titles) + (f". {flat.node.summary}" if flat.node.summary else ""))
        cached = index.ranking_memo["section_vectors"] = _embed(texts)
    return cached
