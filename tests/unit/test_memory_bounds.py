"""Every cache a process keeps for as long as it runs has a bound past which it evicts
(docs/services.md, Memory bounds): the LRU they share, the character-bounded text caches, the
page-text caches of the compressor and the verifier, and no functools cache anywhere without a size."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import services
import shared
from shared.app.page_texts import PageTextCache
from shared.model.lru import Lru, TextCache, text_cache
from shared.text import lexical, names


def test_the_lru_drops_the_least_recently_used_past_its_entries() -> None:
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # now "b" is the least recently used
    lru.put("c", 3)
    assert "b" not in lru and list(lru) == ["a", "c"] and lru.evictions == 1
    assert lru.peek("a") == 1 and list(lru) == ["a", "c"]  # a peek is no use


def test_a_weighted_lru_holds_at_most_its_weight_and_refuses_an_entry_heavier_than_that() -> None:
    lru: Lru[str, str] = Lru(100, weight=lambda key, value: len(value), max_weight=10)
    for key in "abcd":
        lru.put(key, "x" * 4)
    assert list(lru) == ["c", "d"] and lru.weight == 8
    lru.put("e", "x" * 11)
    assert "e" not in lru and lru.weight == 8
    lru.put("c", "x" * 2)  # replaced, not counted twice
    assert lru.weight == 6
    assert lru.pop("d") == "xxxx" and lru.weight == 2


def test_a_text_cache_is_bounded_by_the_characters_of_its_texts() -> None:
    calls: list[str] = []

    @text_cache(max_entries=1000, max_chars=100)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    texts = [f"{n:03d}" + "x" * 27 for n in range(10)]  # 30 characters each
    assert [upper(t) for t in texts] == [t.upper() for t in texts]
    assert len(upper.entries) == 3 and upper.entries.weight == 90
    upper(texts[-1])
    assert len(calls) == 10  # the latest are held
    upper(texts[0])
    assert len(calls) == 11  # the oldest were dropped
    upper("y" * 101)
    upper("y" * 101)
    assert len(calls) == 13  # longer than the bound on its own: computed, never held


def test_the_term_and_sentence_caches_are_bounded_by_characters() -> None:
    for cache, chars in ((lexical._cached_terms, lexical.TERM_CACHE_CHARS),
                         (lexical.sentences_of, lexical.SENTENCE_CACHE_CHARS)):
        assert isinstance(cache, TextCache)
        assert cache.entries.max_weight == chars
    lexical._cached_terms.cache_clear()
    page = "The relief valve opens at the set pressure. " * 50
    assert lexical.terms(page) == lexical.terms(page)
    assert lexical._cached_terms.entries.weight == len(page)


def test_the_fuzzy_name_look_ups_of_a_vocabulary_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names, "MAX_MEMOISED_TERMS", 5)
    memo: dict[str, object] = {}
    vocabulary = {"pressure", "valve"}
    for n in range(12):
        assert names.unmentioned_names([(f"zorblax{n}", f"Zorblax{n}")], [(vocabulary, None, memo)]) == [f"Zorblax{n}"]
        assert len(memo["mentioned"]) <= 5  # type: ignore[arg-type]
    assert names.unmentioned_names([("valve", "Valve")], [(vocabulary, None, memo)]) == []


class Pages:
    """A page store of documents of ten 1,000-character pages; counts its reads."""

    def __init__(self) -> None:
        self.reads = 0

    async def get_document(self, doc_id: str) -> object:
        return type("Record", (), {"tenant": "acme"})()

    async def get_documents(self, doc_ids: list[str]) -> dict[str, object]:
        return {doc_id: await self.get_document(doc_id) for doc_id in doc_ids}

    async def get_pages(self, doc_id: str) -> list[str]:
        self.reads += 1
        return [doc_id * 1000] * 10

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]:
        return {}


async def test_the_stages_page_texts_are_bounded_by_characters() -> None:
    store = Pages()
    texts = PageTextCache(store, max_chars=25_000)  # type: ignore[arg-type]
    for doc_id in "abc":
        await texts.texts("acme", doc_id, 1, {1})
    assert "a" not in texts and "b" in texts and "c" in texts
    await texts.texts("acme", "c", 1, {2})
    assert store.reads == 3  # held: no read
    await texts.texts("acme", "a", 1, {1})
    assert store.reads == 4


def _modules(package: ModuleType) -> list[ModuleType]:
    found = []
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if info.name.endswith(("__main__", ".main")):
            continue  # entry points: they start servers when imported
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:
            continue  # an optional dependency that is not installed
    return found


@pytest.mark.parametrize("package", [shared, services], ids=["shared", "services"])
def test_no_functools_cache_is_unbounded(package: ModuleType) -> None:
    seen, unbounded = [], []
    for module in _modules(package):
        for name, value in vars(module).items():
            info = getattr(value, "cache_parameters", None)
            if callable(info) and getattr(value, "__module__", None) == module.__name__:
                seen.append(name)
                if info()["maxsize"] is None:
                    unbounded.append(f"{module.__name__}.{name}")
    assert len(seen) >= 5  # the scan finds the caches there are
    assert unbounded == []
