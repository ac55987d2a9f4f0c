"""The shared data folder for the benchmark tests (skipped with a reason if absent)."""

from tests.support.shared_data import shared_data_with_questions

__all__ = ["shared_data_with_questions"]
