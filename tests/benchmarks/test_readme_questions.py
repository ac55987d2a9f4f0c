"""The figures of questions in the README and docs/measurements.md are the ones `make eval`
wrote: every row they print from `bench/results/cv_collections.json`, `cv_documents.json`,
`cv_corpus.json` and `cv_shared_store.json` is there, in order."""

from __future__ import annotations

import json
from pathlib import Path

from treerag.evaluation.cv_report import (
    README_SETS,
    README_SYSTEMS,
    answer_rows,
    headline_rows,
    readme_rows,
    shared_store_rows,
)

ROOT = Path(__file__).resolve().parents[2]


def _results(name: str) -> dict:
    return json.loads((ROOT / "bench" / "results" / name).read_text(encoding="utf-8"))


def _holds_in_order(path: Path, table: list[str]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    at = [lines.index(row) if row in lines else -1 for row in table]
    missing = [row for row, line in zip(table, at, strict=True) if line < 0]
    assert not missing, f"{path.name} differs from bench/results; print the rows with `python -m bench.questions_table`"
    assert at == list(range(at[0], at[0] + len(table)))


def test_the_questions_tables_are_the_last_make_eval_run() -> None:
    collections, documents = _results("cv_collections.json"), _results("cv_documents.json")
    corpus, store = _results("cv_corpus.json"), _results("cv_shared_store.json")
    assert collections["split"] == "collection" and documents["split"] == "document"
    assert documents["corpus"] is False and corpus["corpus"] is True
    assert store["corpus"] is True and store["split"] == "company" and store["pool"] >= 100
    rows = readme_rows(collections, documents, corpus)
    assert len(rows) == len(README_SETS) * len(README_SYSTEMS)
    for table in (rows, shared_store_rows(store), answer_rows(collections)):
        _holds_in_order(ROOT / "docs" / "measurements.md", table)
    _holds_in_order(ROOT / "README.md", headline_rows(collections, store))
