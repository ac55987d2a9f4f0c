"""Terms as integer ids into one document's vocabulary, and rows of ids laid end to end, so
that a document's postings and term sets are built and stored as arrays."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

import numpy as np


class Vocabulary:
    """The distinct terms of one document, numbered in order of first appearance."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        self.words: list[str] = list(words)
        self.ids: dict[str, int] = {word: i for i, word in enumerate(self.words)}
        if len(self.ids) != len(self.words):
            raise ValueError("a vocabulary lists each term once")

    def __len__(self) -> int:
        return len(self.words)

    def id(self, term: str) -> int | None:
        return self.ids.get(term)

    def ids_of(self, terms: Iterable[str]) -> list[int]:
        """The ids of `terms`, numbering the terms not seen before."""
        ids = self.ids
        out = []
        for term in terms:
            found = ids.get(term)
            if found is None:
                found = ids[term] = len(self.words)
                self.words.append(term)
            out.append(found)
        return out

    def terms_of(self, ids: np.ndarray) -> list[str]:
        words = self.words
        return [words[i] for i in ids.tolist()]


class Ragged:
    """Rows of term ids laid end to end: row i is `ids[offsets[i]:offsets[i + 1]]`."""

    __slots__ = ("ids", "offsets")

    def __init__(self, ids: np.ndarray, offsets: np.ndarray) -> None:
        self.ids = ids  # int32
        self.offsets = offsets  # int64, one more than the rows

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def row(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i] : self.offsets[i + 1]]

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def row_numbers(self) -> np.ndarray:
        """The row of every id, in order."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths())

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of the given rows laid end to end, and for each id its position in `rows`."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self.offsets[rows]
        lengths = self.offsets[rows + 1] - starts
        owner = np.repeat(np.arange(len(rows)), lengths)
        first = np.cumsum(lengths) - lengths
        return self.ids[starts[owner] + np.arange(int(lengths.sum())) - first[owner]], owner

    def joined(self, other: Ragged) -> Ragged:
        """Row i of this, then row i of `other`, for every row (as many in both)."""
        if len(other) != len(self):
            raise ValueError(f"joining {len(self)} rows with {len(other)}")
        mine, theirs = self.lengths(), other.lengths()
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(mine + theirs, out=offsets[1:])
        ids = np.empty(int(offsets[-1]), dtype=np.int32)
        rows = self.row_numbers()
        ids[np.arange(len(self.ids)) - self.offsets[rows] + offsets[rows]] = self.ids
        rows = other.row_numbers()
        ids[np.arange(len(other.ids)) - other.offsets[rows] + offsets[rows] + mine[rows]] = other.ids
        return Ragged(ids, offsets)

    @classmethod
    def of(cls, rows: Sequence[Sequence[int] | np.ndarray]) -> Ragged:
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=offsets[1:])
        if not rows:
            return cls(np.zeros(0, dtype=np.int32), offsets)
        return cls(np.concatenate([np.asarray(r, dtype=np.int32) for r in rows]), offsets)


def distinct_pairs(keys: np.ndarray, rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (key, row) pairs, ordered by key then row, and how often each occurs."""
    width = max(n_rows, 1)
    combined, counts = np.unique(keys.astype(np.int64) * width + rows, return_counts=True)
    return combined // width, combined % width, counts


# Look-ups of terms a postings does not hold that are remembered before they are forgotten
# (the terms it holds are remembered for good: at most one entry each).
MISSES_REMEMBERED = 1024


class Postings(dict[str, tuple[np.ndarray, ...] | None]):
    """term -> (rows, values...), or None for a term it does not hold: `postings[term]`, from
    arrays ordered by term id (the entries of the i-th distinct term are `starts[i]:starts[i + 1]`
    of each column).

    A term's entries are sliced out on its first look-up and kept: a question's terms recur
    across queries and documents, and the dictionary's own look-up costs a tenth of slicing the
    arrays again. As a dictionary it holds only what was looked up; `terms()` lists them all."""

    __slots__ = ("vocabulary", "term_ids", "starts", "columns", "_slot", "_words", "_misses")

    def __init__(self, vocabulary: Vocabulary, keys: np.ndarray, columns: tuple[np.ndarray, ...]) -> None:
        """`keys`: the term id of every entry, ascending; `columns`: the entries' values."""
        super().__init__()
        self.vocabulary = vocabulary
        first = np.flatnonzero(np.diff(keys, prepend=-1)) if keys.size else np.zeros(0, dtype=np.int64)
        self.term_ids = keys[first]
        starts = np.append(first, keys.size).astype(np.int64)
        slot = np.full(int(self.term_ids.max()) + 1 if self.term_ids.size else 0, -1, dtype=np.int64)
        slot[self.term_ids] = np.arange(len(self.term_ids))
        # Read one number at a time on a first look-up: an array module array gives Python ints
        # several times faster than indexing a NumPy array does.
        self.starts = array("q", starts.tobytes())
        self._slot = array("q", slot.tobytes())
        self.columns = columns
        self._words: frozenset[str] | None = None
        self._misses = 0

    def __missing__(self, term: str) -> tuple[np.ndarray, ...] | None:
        i = self.vocabulary.ids.get(term)
        slot = self._slot[i] if i is not None and i < len(self._slot) else -1
        if slot >= 0:
            lo, hi = self.starts[slot], self.starts[slot + 1]
            found: tuple[np.ndarray, ...] | None = tuple(column[lo:hi] for column in self.columns)
        else:
            found = None
            self._misses += 1
            if self._misses > MISSES_REMEMBERED:
                for forgotten in [t for t, entry in self.items() if entry is None]:
                    del self[forgotten]
                self._misses = 1
        self[term] = found
        return found

    def get(self, term: str, default: None = None) -> tuple[np.ndarray, ...] | None:  # type: ignore[override]
        return self[term]

    def __contains__(self, term: object) -> bool:
        """Whether it holds the term (not whether the term was looked up)."""
        return isinstance(term, str) and self[term] is not None

    def terms(self) -> list[str]:
        """Every term it holds, by id."""
        return self.vocabulary.terms_of(self.term_ids)

    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(self.terms())
        return self._words

    def lengths(self) -> np.ndarray:
        return np.diff(np.frombuffer(self.starts, dtype=np.int64)) if len(self.starts) else np.zeros(0, dtype=np.int64)
