"""The README's "Questions" tables are the ones `make eval` wrote: every row they print from
`bench/results/cv_collections.json`, `cv_documents.json`, `cv_corpus.json` and
`cv_shared_store.json` is in the README, in order."""

from __future__ import annotations

import json
from pathlib import Path

from treerag.evaluation.cv_report import README_SETS, README_SYSTEMS, answer_rows, readme_rows, shared_store_rows

ROOT = Path(__file__).resolve().parents[2]


def _results(name: str) -> dict:
    return json.loads((ROOT / "bench" / "results" / name).read_text(encoding="utf-8"))


def test_the_readme_questions_table_is_the_last_make_eval_run() -> None:
    collections, documents = _results("cv_collections.json"), _results("cv_documents.json")
    corpus, store = _results("cv_corpus.json"), _results("cv_shared_store.json")
    assert collections["split"] == "collection" and documents["split"] == "document"
    assert documents["corpus"] is False and corpus["corpus"] is True
    assert store["corpus"] is True and store["split"] == "company" and store["pool"] >= 100
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    rows = readme_rows(collections, documents, corpus)
    assert len(rows) == len(README_SETS) * len(README_SYSTEMS)
    for table in (rows, shared_store_rows(store), answer_rows(collections)):
        at = [readme.index(row) if row in readme else -1 for row in table]
        missing = [row for row, line in zip(table, at, strict=True) if line < 0]
        assert not missing, "README differs from bench/results; print the rows with `python -m bench.questions_table`"
        assert at == list(range(at[0], at[0] + len(table)))
