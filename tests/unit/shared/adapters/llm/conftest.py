"""The fixtures of the model client tests: a local provider server per test and the real clients
pointed at it."""

from tests.support.llm.clients import client, client_kind, provider

__all__ = ["client", "client_kind", "provider"]
