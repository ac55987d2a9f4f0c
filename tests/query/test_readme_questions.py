"""The README's "Questions" table is the one `make eval` wrote: every row it prints from
`bench/results/cv_documents.json` and `cv_corpus.json` is in the README, in order."""

from __future__ import annotations

import json
from pathlib import Path

from treerag.evaluation.cv_report import README_SETS, README_SYSTEMS, readme_rows

ROOT = Path(__file__).resolve().parents[2]


def _results(name: str) -> dict:
    return json.loads((ROOT / "bench" / "results" / name).read_text(encoding="utf-8"))


def test_the_readme_questions_table_is_the_last_make_eval_run() -> None:
    documents, corpus = _results("cv_documents.json"), _results("cv_corpus.json")
    assert documents["corpus"] is False and corpus["corpus"] is True
    rows = readme_rows(documents, corpus)
    assert len(rows) == len(README_SETS) * len(README_SYSTEMS)
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    at = [readme.index(row) if row in readme else -1 for row in rows]
    missing = [row for row, line in zip(rows, at, strict=True) if line < 0]
    assert not missing, "README differs from bench/results; print the rows with `python -m bench.questions_table`"
    assert at == list(range(at[0], at[0] + len(rows)))
