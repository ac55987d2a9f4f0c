"""WordLlama: static word embeddings whose weights ship inside the `wordllama` wheel.

A text's vector is the mean of its tokens' embeddings (what `WordLlamaInference.embed` computes),
here computed over whitespace-separated words: every distinct word of a batch is tokenised once
and a text is its word counts times the words' summed token vectors. The result equals
WordLlama's own embedding of the text with its whitespace collapsed to single spaces, at a
fraction of the cost on long pages (tokenising each page in full dominated ingestion time).

Licence: the `wordllama` package is MIT-licensed; the bundled `l2_supercat` weights were trained
from the token-embedding tables of LLaMA 2 70B and other models sharing its tokenizer, so they
derive from Llama 2 (the Llama 2 Community License; see NOTICE).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import numpy as np

from shared.adapters.embeddings.errors import EmbeddingsConfigError
from shared.adapters.embeddings.normalise import unit_rows

logger = logging.getLogger(__name__)

CONFIG = "l2_supercat"
FULL_DIMENSION = 256
# The weights are trained so that their leading components are an embedding of their own.
DIMENSIONS = (64, 128, 256)
# SentencePiece's mark for "a space before this token".
WORD_MARK = "\u2581"


@contextmanager
def _root_logging_kept() -> Iterator[None]:
    """`import wordllama` calls `logging.basicConfig(level=INFO)`: without this, every INFO line
    of every library would reach stderr in plain text, past the process's own log settings."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers


class WordLlamaEmbedder:
    """The offline default `Embedder`: no download, ~16 MB of weights read from the wheel."""

    def __init__(self, dimension: int = FULL_DIMENSION) -> None:
        if dimension not in DIMENSIONS:
            raise EmbeddingsConfigError(f"wordllama offers dimensions {DIMENSIONS}, not {dimension}")
        try:
            with _root_logging_kept():
                import wordllama
                from wordllama import WordLlama
        except ImportError as exc:
            raise EmbeddingsConfigError(
                "the wordllama package is missing: `pip install wordllama` (a dependency of treerag), "
                "or set TREERAG_EMBEDDINGS=off"
            ) from exc
        # Plain `WordLlama.load()` looks for the tokenizer where the wheel does not put it and
        # then reaches for the network; the wheel's own folder holds both files.
        model = WordLlama.load(
            config=CONFIG, cache_dir=Path(wordllama.__file__).parent, disable_download=True,
            trunc_dim=dimension if dimension != FULL_DIMENSION else None,
        )
        self._table = np.ascontiguousarray(model.embedding[:, :dimension], dtype=np.float32)
        self._tokenizer = model.tokenizer
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.dimension = dimension
        self.name = f"wordllama:{CONFIG}_{dimension}"

    @cached_property
    def _starts_word(self) -> np.ndarray:
        """Per token id: True when the token begins a word (its piece starts with the space mark)."""
        marks = np.zeros(self._table.shape[0], dtype=bool)
        for piece, token_id in self._tokenizer.get_vocab().items():
            if piece.startswith(WORD_MARK) and token_id < len(marks):
                marks[token_id] = True
        return marks

    def _word_token_ids(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(token ids of all words laid end to end, token count per word).

        The words are tokenised as one space-joined text (one tokenizer call instead of one per
        word, the same tokens); each word's first token carries the space mark, which is where
        the text is cut back into words. A word holding the mark itself would shift the cuts:
        then every word is tokenised on its own."""
        ids = np.asarray(self._tokenizer.encode(" ".join(words), add_special_tokens=False).ids, dtype=np.int64)
        np.clip(ids, 0, self._table.shape[0] - 1, out=ids)
        starts = np.flatnonzero(self._starts_word[ids])
        if len(starts) == len(words) and (len(starts) == 0 or starts[0] == 0):
            return ids, np.diff(np.append(starts, len(ids)))
        encodings = self._tokenizer.encode_batch(words, add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        ids = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64, count=int(lengths.sum()))
        np.clip(ids, 0, self._table.shape[0] - 1, out=ids)
        return ids, lengths

    def _word_vectors(self, words: list[str]) -> np.ndarray:
        """Sum of token embeddings per word (tokenised as a word after a space)."""
        ids, lengths = self._word_token_ids(words)
        indptr = np.concatenate(([0], np.cumsum(lengths)))
        return bag_sums(self._table, ids, indptr)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        column: dict[str, int] = {}
        indptr = [0]
        indices: list[int] = []
        counts: list[int] = []
        for text in texts:
            words = Counter(text.split())
            indices.extend(column.setdefault(word, len(column)) for word in words)
            counts.extend(words.values())
            indptr.append(len(indices))
        if not column:
            return np.zeros((len(texts), self.dimension), dtype=np.float32)
        by_text = bag_sums(self._word_vectors(list(column)), np.asarray(indices, dtype=np.int64),
                           np.asarray(indptr, dtype=np.int64), np.asarray(counts, dtype=np.float32))
        # The mean and the sum of token vectors point the same way: normalising makes them equal.
        return unit_rows(by_text)


def bag_sums(vectors: np.ndarray, items: np.ndarray, indptr: np.ndarray,
             weights: np.ndarray | None = None) -> np.ndarray:
    """Row i: the sum of `vectors[items[p]]` (times `weights[p]`) over the positions p of
    indptr[i]:indptr[i+1], in float32 and in position order, as a sparse product adds them. The
    k-th position of every bag is added at once, the bags sorted longest first so that those
    with a k-th position are a prefix."""
    lengths = np.diff(indptr)
    out = np.zeros((len(lengths), vectors.shape[1]), dtype=np.float32)
    if not len(lengths):
        return out
    order = np.argsort(-lengths, kind="stable")
    longest_first = lengths[order]
    starts = indptr[:-1][order]
    for k in range(int(longest_first[0])):
        bags = int(np.searchsorted(-longest_first, -k, side="left"))  # the bags longer than k
        positions = starts[:bags] + k
        added = vectors[items[positions]]
        out[order[:bags]] += added if weights is None else added * weights[positions, None]
    return out
