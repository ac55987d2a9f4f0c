"""A bounded mapping, the least recently used entry dropped first: the one shape of every cache
that a process keeps for as long as it runs (docs/services.md, Memory bounds, lists them).

Bounded by entries, and optionally by a weight (a text's characters, say) when entries differ
too much in size for a count to bound memory. A plain data structure, so the text toolkit, the
stages and the adapters may all use it; not thread-safe (callers on threads hold a lock).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, max_entries: int, *, weight: Callable[[K, V], int] | None = None,
                 max_weight: int | None = None) -> None:
        if max_entries < 1:
            raise ValueError("an LRU needs max_entries >= 1")
        if (weight is None) != (max_weight is None):
            raise ValueError("give weight and max_weight together")
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._weigh = weight
        self._entries: OrderedDict[K, V] = OrderedDict()
        self.weight = 0  # summed weight of the entries held
        self.evictions = 0

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recently used), else None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def peek(self, key: K) -> V | None:
        """The value of `key` without counting it as used."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Hold `value` (the most recently used); older entries go past the bounds. An entry
        heavier than `max_weight` on its own is not held."""
        self.pop(key)
        weight = self._weigh(key, value) if self._weigh is not None else 0
        if self.max_weight is not None and weight > self.max_weight:
            return
        self._entries[key] = value
        self.weight += weight
        while len(self._entries) > self.max_entries or (self.max_weight is not None and self.weight > self.max_weight):
            old_key, old_value = self._entries.popitem(last=False)
            self.weight -= self._weigh(old_key, old_value) if self._weigh is not None else 0
            self.evictions += 1

    def pop(self, key: K) -> V | None:
        value = self._entries.pop(key, None)
        if value is not None and self._weigh is not None:
            self.weight -= self._weigh(key, value)
        return value

    def clear(self) -> None:
        self._entries.clear()
        self.weight = 0

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[K]:
        """Keys, least recently used first."""
        return iter(list(self._entries))


class TextCache(Generic[V]):
    """`fn(text)` memoised in an `Lru` bounded by entries and by the texts' summed characters
    (the memory of a cache keyed by page texts follows their length, not their count); a text
    longer than `max_chars` alone is computed every time. Thread-safe, like functools.lru_cache,
    which it replaces where the texts' sizes vary."""

    def __init__(self, fn: Callable[[str], V], max_entries: int, max_chars: int) -> None:
        self.fn = fn
        self.entries: Lru[str, V] = Lru(max_entries, weight=lambda text, _: len(text), max_weight=max_chars)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, text: str) -> V:
        with self._lock:
            value = self.entries.get(text)
            if value is not None:
                self.hits += 1
                return value
            self.misses += 1
        value = self.fn(text)
        with self._lock:
            self.entries.put(text, value)
        return value

    def cache_clear(self) -> None:
        with self._lock:
            self.entries.clear()


def text_cache(max_entries: int, max_chars: int) -> Callable[[Callable[[str], V]], TextCache[V]]:
    """Decorator: `@text_cache(max_entries=..., max_chars=...)` over a function of one text."""
    return lambda fn: TextCache(fn, max_entries, max_chars)
