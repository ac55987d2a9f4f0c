"""The fixtures of the indexer tests: the shared data folder, and a local provider server with the
real model clients pointed at it."""

from tests.support.llm.clients import client, client_kind, provider
from tests.support.shared_data import shared_data

__all__ = ["client", "client_kind", "provider", "shared_data"]
