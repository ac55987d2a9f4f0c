"""The shared data folder for the page viewer's browser tests on a real filing (skipped with a reason if absent)."""

from tests.support.shared_data import shared_data

__all__ = ["shared_data"]
