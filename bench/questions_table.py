"""Print the README's "Questions" table rows from the results of `make eval`:

    python -m bench.questions_table [--results bench/results]

(`cv_documents.json` and `cv_corpus.json`); a test checks the README holds exactly these rows.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from treerag.evaluation.cv_report import readme_rows

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    documents = json.loads((args.results / "cv_documents.json").read_text(encoding="utf-8"))
    corpus = json.loads((args.results / "cv_corpus.json").read_text(encoding="utf-8"))
    print("\n".join(readme_rows(documents, corpus)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
