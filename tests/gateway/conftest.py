"""The shared data folder for the gateway's tests on real filings (skipped with a reason if absent)."""

from tests.indexer.conftest import shared_data

__all__ = ["shared_data"]
