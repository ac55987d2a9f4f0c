"""Process settings follow the environment: a TREERAG_ variable set, changed or removed between
two reads is what the second read gives."""

from __future__ import annotations

import pytest

from shared.settings import get_settings


def test_a_changed_variable_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TREERAG_MAX_PAGES", "123")
    assert get_settings().max_pages == 123
    monkeypatch.setenv("TREERAG_MAX_PAGES", "456")
    assert get_settings().max_pages == 456
    monkeypatch.delenv("TREERAG_MAX_PAGES")
    assert get_settings().max_pages == 10_000


def test_a_variable_named_in_lower_case_counts_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TREERAG_MAX_PAGES", raising=False)
    assert get_settings().max_pages == 10_000
    monkeypatch.setenv("treerag_max_pages", "77")
    assert get_settings().max_pages == 77


def test_each_caller_gets_its_own_settings() -> None:
    first = get_settings()
    first.max_pages = 1
    assert get_settings().max_pages != 1
