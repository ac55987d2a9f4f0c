"""Fixtures for the ingestion tests: the shared data folder (skipped with a reason if absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(
    os.environ.get("TREERAG_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data")
)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "pdfs").is_dir():
        pytest.skip(f"shared data set not found at {SHARED_DATA} (set TREERAG_SHARED_DATA)")
    return SHARED_DATA
