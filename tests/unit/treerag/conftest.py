"""The fixtures of the one-process tests: a store holding an indexed PDF, and a local provider
server with the real model clients pointed at it."""

from tests.support.llm.clients import client, client_kind, provider
from tests.support.query.indexes import guide_indexed, guide_store

__all__ = ["client", "client_kind", "guide_indexed", "guide_store", "provider"]
