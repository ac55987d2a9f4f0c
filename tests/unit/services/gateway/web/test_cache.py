"""The page viewer's caches hold at most their byte bound, dropping the least recently used."""

from __future__ import annotations

from services.gateway.web.cache import ByteBoundedCache


def test_the_least_recently_used_entries_go_first_and_the_bound_holds() -> None:
    cache = ByteBoundedCache(max_bytes=10)
    cache.put("a", b"aaaa")
    cache.put("b", b"bbbb")
    assert cache.get("a") == b"aaaa"  # now "b" is the least recently used
    cache.put("c", b"cccc")
    assert cache.get("b") is None
    assert cache.get("a") == b"aaaa" and cache.get("c") == b"cccc"
    assert cache.size <= 10


def test_a_value_larger_than_the_bound_is_not_kept_and_evicts_nothing() -> None:
    cache = ByteBoundedCache(max_bytes=10)
    cache.put("a", b"aaaa")
    cache.put("huge", b"x" * 11)
    assert cache.get("huge") is None
    assert cache.get("a") == b"aaaa"


def test_replacing_a_key_counts_its_new_size_only() -> None:
    cache = ByteBoundedCache(max_bytes=10)
    cache.put("a", b"aaaaaaaa")
    cache.put("a", b"aa")
    cache.put("b", b"bbbbbbbb")
    assert cache.get("a") == b"aa" and cache.size == 10
