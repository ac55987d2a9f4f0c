"""The answer cache key covers every input that changes an answer; the cache counts hits."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from prometheus_client import REGISTRY

from shared.adapters.cache import AnswerCache
from shared.adapters.embedded.store import EmbeddedRepository
from shared.app.answer_key import answer_cache_key
from shared.model.query import QuerySettings

DOCS = [("a1b2c3d4e5f60718", 1), ("ffeeddccbbaa0099", 3)]
BASE = {"model": "gemini-2.5-flash", "language": "en", "prompt_version": "answer-v1"}


def _key(question: str = "What is a data frame?", documents=DOCS, settings: QuerySettings | None = None, **overrides: str) -> str:
    return answer_cache_key(question, documents, settings or QuerySettings(), **{**BASE, **overrides})


def _different_value(name: str) -> Any:
    """A valid value of the field other than its default, found from the field's type."""
    field = QuerySettings.model_fields[name]
    default = field.default
    if typing.get_origin(field.annotation) is typing.Literal:
        return next(v for v in typing.get_args(field.annotation) if v != default)
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        # Stay inside [0, 1] bounds where a field has them.
        return default / 2 if default > 0 else 0.5
    raise AssertionError(f"add a rule for QuerySettings.{name} ({field.annotation}) to this test")


def test_key_is_stable_and_hex_sha256() -> None:
    assert _key() == _key()
    assert len(_key()) == 64 and int(_key(), 16) >= 0


@pytest.mark.parametrize("name", list(QuerySettings.model_fields))
def test_every_setting_changes_the_key(name: str) -> None:
    changed = QuerySettings(**{name: _different_value(name)})
    assert getattr(changed, name) != getattr(QuerySettings(), name)
    assert _key(settings=changed) != _key()


def test_question_documents_model_language_and_prompt_version_change_the_key() -> None:
    base = _key()
    variants = [
        _key(question="What is a list?"),
        _key(documents=[("a1b2c3d4e5f60718", 2), ("ffeeddccbbaa0099", 3)]),  # a rebuilt tree
        _key(documents=DOCS[:1]),
        _key(model="llama3.1"),
        _key(model="extractive"),
        _key(language="ko"),
        _key(prompt_version="answer-v2"),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_document_order_and_spacing_do_not_split_the_cache() -> None:
    assert _key(documents=list(reversed(DOCS))) == _key()
    assert _key(question="  What is a   data frame? ") == _key()


async def test_cache_hits_after_put_and_counts(tmp_path) -> None:
    cache = AnswerCache(EmbeddedRepository(tmp_path))
    hits = REGISTRY.get_sample_value("treerag_cache_hits_total", {"cache": "answer"}) or 0.0
    assert await cache.get(_key()) is None
    await cache.put(_key(), {"answer": "A table of columns [R-intro.pdf, p. 27]", "confidence": 0.8})
    assert (await cache.get(_key()))["confidence"] == 0.8
    assert await cache.get(_key(settings=QuerySettings(beam_width=9))) is None
    assert (cache.hits, cache.misses) == (1, 2)
    assert REGISTRY.get_sample_value("treerag_cache_hits_total", {"cache": "answer"}) == hits + 1


async def test_repository_backs_a_fresh_process(tmp_path) -> None:
    await AnswerCache(EmbeddedRepository(tmp_path)).put(_key(), {"answer": "x"})
    fresh = AnswerCache(EmbeddedRepository(tmp_path))
    assert await fresh.get(_key()) == {"answer": "x"}


async def test_lru_evicts_the_oldest_entry() -> None:
    cache = AnswerCache(None, max_entries=2)
    for question in ("one", "two", "three"):
        await cache.put(_key(question), {"q": question})
    assert await cache.get(_key("one")) is None
    assert await cache.get(_key("three")) == {"q": "three"}


async def test_a_cached_value_cannot_be_changed_by_the_caller() -> None:
    cache = AnswerCache(None)
    await cache.put(_key(), {"warnings": []})
    (await cache.get(_key()))["warnings"].append("mutated")
    assert await cache.get(_key()) == {"warnings": []}
