"""Print the rows of the questions tables (docs/measurements.md, and the README's headline
table last) from the results of `make eval`:

    python -m bench.questions_table [--results bench/results]

(`cv_collections.json`, `cv_documents.json`, `cv_corpus.json`, then `cv_shared_store.json`, then
the answers of `cv_collections.json`); a
test checks docs/measurements.md and the README hold exactly these rows.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from treerag.evaluation.cv_report import answer_rows, headline_rows, readme_rows, shared_store_rows

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    def results(name: str) -> dict:
        return json.loads((args.results / name).read_text(encoding="utf-8"))

    print("\n".join(readme_rows(results("cv_collections.json"), results("cv_documents.json"),
                                results("cv_corpus.json"))))
    print()
    print("\n".join(shared_store_rows(results("cv_shared_store.json"))))
    print()
    print("\n".join(answer_rows(results("cv_collections.json"))))
    print()
    print("\n".join(headline_rows(results("cv_collections.json"), results("cv_shared_store.json"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
