"""Where a sentence restates its evidence window with a word or two replaced.

The sentence's words are aligned with the window's (longest matching blocks, on stems). A
*substitution slot* is a run of one or two sentence content words that the window does not
hold, anchored by at least two aligned words on both sides (or before it at the sentence's
end), where the window has as many different content words at the aligned place:
"to end users" against "to the end users" is no slot; "classified as payables on the balance
sheet" against "classified as receivables on the balance sheet" is one, (payables, receivables).

Whether a slot is a synonym ("portion" → "share") or a wrong word ("monthly" for "quarterly")
cannot be read from the letters. With word vectors (`WordVectors`, from any embedder), each slot
gets the cosine similarity of its two words; the verifier's score weighs the slots and their
similarity with weights fitted on a labelled set (`shared/text/grounding.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Protocol

import numpy as np

from shared.text.lexical import STOPWORDS, stem
from shared.text.normalize import tokenize

# Replaced runs longer than this are a rewording, not a substitution.
MAX_SLOT = 2
# Aligned words needed on each side of a slot: a reordered sentence aligns with its window in
# short scattered blocks (often one function word), and what lies between them is a rewording.
ANCHOR = 2
MIN_CONTENT_LENGTH = 3


class TextEmbedder(Protocol):
    """Anything that maps texts to unit vectors (the `Embedder` port has this shape)."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class WordVectors:
    """Unit vectors of single lower-case words, memoised: a word's vector never changes, and a
    page's words recur across the sentences that cite it."""

    def __init__(self, embedder: TextEmbedder, limit: int = 200_000) -> None:
        self.name = embedder.name
        self._embedder = embedder
        self._limit = limit
        self._known: dict[str, np.ndarray] = {}

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        missing = [w for w in dict.fromkeys(words) if w not in self._known]
        if missing:
            if len(self._known) + len(missing) > self._limit:
                self._known.clear()
            for word, vector in zip(missing, self._embedder.embed(missing), strict=True):
                self._known[word] = vector
        return np.stack([self._known[w] for w in words]) if words else np.zeros((0, 0), dtype=np.float32)

    def similarity(self, a: str, b: str) -> float:
        pair = self.vectors([a, b])
        return float(pair[0] @ pair[1])


@dataclass(frozen=True)
class Substitution:
    said: tuple[str, ...]  # the sentence's words at the slot
    source: tuple[str, ...]  # the window's words at the aligned place


def is_content(word: str) -> bool:
    return len(word) >= MIN_CONTENT_LENGTH and word.isalpha() and word not in STOPWORDS


def same_word(a: str, b: str) -> bool:
    """Two forms of one word the light stemmer keeps apart ("traded"/"trades",
    "collect"/"collectible"): a shared beginning of at least four letters and 60 % of the
    shorter word."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared >= max(4, 0.6 * min(len(a), len(b)))


@lru_cache(maxsize=8192)
def aligned_words(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(lower-case words, their stems) of a text."""
    words = tuple(tokenize(text))
    return words, tuple(stem(w) for w in words)


Words = tuple[tuple[str, ...], tuple[str, ...]]  # (words, their stems), as `aligned_words` reads them


def substitutions(sentence: str, window: str) -> list[Substitution]:
    """The substitution slots of `sentence` against `window`."""
    return slots_between(aligned_words(sentence), aligned_words(window))


def slots_between(sentence: Words, window: Words) -> list[Substitution]:
    """`substitutions` on words already read (a page's windows are read once)."""
    (said, said_stems), (source, source_stems) = sentence, window
    if not said or not source:
        return []
    opcodes = SequenceMatcher(None, said_stems, source_stems, autojunk=False).get_opcodes()
    found = []
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag != "replace" or i2 - i1 > MAX_SLOT or j2 - j1 > MAX_SLOT:
            continue
        before = opcodes[n - 1] if n else None
        after = opcodes[n + 1] if n + 1 < len(opcodes) else None
        anchored_before = before is not None and before[0] == "equal" and before[2] - before[1] >= ANCHOR
        anchored_after = after is not None and after[0] == "equal" and after[2] - after[1] >= ANCHOR
        if not anchored_before or not (anchored_after or i2 == len(said)):
            continue
        words = tuple(w for w in said[i1:i2] if is_content(w))
        others = tuple(w for w in source[j1:j2] if is_content(w))
        words = tuple(w for w in words if not any(same_word(w, o) for o in others))
        if words and others:
            found.append(Substitution(words, others))
    return found


def least_similarity(slots: Sequence[Substitution], vectors: WordVectors) -> float:
    """The cosine similarity of the least similar slot (each slot's words averaged), 1.0 when
    there is no slot."""
    if not slots:
        return 1.0
    lowest = 1.0
    for slot in slots:
        said = vectors.vectors(list(slot.said)).sum(axis=0)
        source = vectors.vectors(list(slot.source)).sum(axis=0)
        norms = float(np.linalg.norm(said) * np.linalg.norm(source))
        lowest = min(lowest, float(said @ source) / norms if norms else 0.0)
    return lowest
