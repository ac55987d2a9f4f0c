"""The shared data folder for the interchange tests on real PDFs (skipped with a reason if absent)."""

from tests.support.shared_data import shared_data

__all__ = ["shared_data"]
