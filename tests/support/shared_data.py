"""The shared data folder (../shared/data) as a fixture, skipped with a reason when absent.

`shared_data` is the folder of PDFs the ingestion, store and viewer tests read (TREERAG_SHARED_DATA
names another); `shared_data_with_questions`, registered under the same fixture name, is the folder
as the query tests read it, with its question sets. A folder's conftest.py imports the one its tests
use.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(
    os.environ.get("TREERAG_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data")
)
QUESTIONS_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "pdfs").is_dir():
        pytest.skip(f"shared data set not found at {SHARED_DATA} (set TREERAG_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session", name="shared_data")
def shared_data_with_questions() -> Path:
    if not (QUESTIONS_DATA / "qa").is_dir():
        pytest.skip(f"shared data set not found at {QUESTIONS_DATA}")
    return QUESTIONS_DATA
