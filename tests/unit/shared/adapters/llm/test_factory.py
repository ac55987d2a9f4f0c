"""Provider selection from settings and environment."""

from __future__ import annotations

import pytest

from shared.adapters.llm import LLMConfigError, make_llm
from shared.adapters.llm.gemini import GeminiClient
from shared.adapters.llm.openai_compat import OpenAICompatibleClient
from shared.settings import Settings
from tests.support.llm.fake_provider import FakeProvider, Reply


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_API_KEY", "TREERAG_LLM", "TREERAG_LLM_MODEL", "TREERAG_LLM_BASE_URL", "TREERAG_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_offline_by_default() -> None:
    assert make_llm(Settings()) is None
    assert make_llm(Settings(llm="off", llm_model="gemini-2.5-flash")) is None


def test_gemini_without_a_key_says_which_variable_to_set() -> None:
    with pytest.raises(LLMConfigError, match="GOOGLE_API_KEY"):
        make_llm(Settings(llm="gemini"))


def test_openai_without_a_model_says_which_variable_to_set() -> None:
    with pytest.raises(LLMConfigError, match="TREERAG_LLM_MODEL"):
        make_llm(Settings(llm="openai", llm_base_url="http://127.0.0.1:9/v1"))


def test_gemini_from_the_environment_reaches_the_base_url(monkeypatch: pytest.MonkeyPatch, provider: FakeProvider) -> None:
    monkeypatch.setenv("TREERAG_LLM", "gemini")
    monkeypatch.setenv("GOOGLE_API_KEY", "env-key")
    monkeypatch.setenv("TREERAG_LLM_BASE_URL", provider.base_url)
    client = make_llm(Settings())
    assert isinstance(client, GeminiClient) and client.model == "gemini-2.5-flash"
    provider.script(Reply(text="hello"))
    assert client.generate_text("hi", purpose="answer") == "hello"
    assert provider.calls[0].headers.get("x-goog-api-key") == "env-key"


def test_openai_compatible_from_the_environment(monkeypatch: pytest.MonkeyPatch, provider: FakeProvider) -> None:
    monkeypatch.setenv("TREERAG_LLM", "openai")
    monkeypatch.setenv("TREERAG_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("TREERAG_LLM_BASE_URL", provider.openai_base_url)
    client = make_llm(Settings())
    assert isinstance(client, OpenAICompatibleClient)
    provider.script(Reply(text="hello"))
    assert client.generate_text("hi", purpose="answer") == "hello"
    assert provider.calls[0].model == "qwen2.5:7b"
    assert "Authorization" not in provider.calls[0].headers  # no key configured, none sent
