"""Fixtures: a local provider server per test and the real clients pointed at it (the conftest.py
of the folders whose tests use them imports them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.adapters.llm.call_cache import CallCache
from shared.adapters.llm.client import BaseLLMClient, ModelRetryPolicy
from shared.adapters.llm.gemini import GeminiClient
from shared.adapters.llm.openai_compat import OpenAICompatibleClient
from tests.support.llm.fake_provider import FakeProvider

# Real backoff shape, test-sized delays.
FAST_RETRY = ModelRetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05, malformed_attempts=2)


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


def make_client(kind: str, server: FakeProvider, **options: object) -> BaseLLMClient:
    settings: dict = {"timeout_s": 5.0, "retry": FAST_RETRY, "cache": CallCache(), **options}
    if kind == "gemini":
        return GeminiClient("test-key", "gemini-2.5-flash", base_url=server.base_url, **settings)
    return OpenAICompatibleClient("llama3.1", base_url=server.openai_base_url, api_key="local-key", **settings)


@pytest.fixture(params=["gemini", "openai"])
def client_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def client(client_kind: str, provider: FakeProvider) -> BaseLLMClient:
    return make_client(client_kind, provider)
