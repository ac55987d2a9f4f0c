"""How the navigator ranks the dev questions that name a page or ask about the document itself:

    python -m bench.page_questions [--data DIR] [--store DIR]

Asks every answerable question of DATA/qa/*.jsonl (by default ../shared/data) of its own
document through `navigate` and prints, per question set, how many have a gold page first and
how many are refused: over all of them, and over those that name a page ("page 14", "the last
page") or ask for the document's date, title or author (the only ones whose ranking the page
references change). Run it on two checkouts to compare them.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from bench.common import configure_bench_logging
from bench.fit_ranker import dev_sets
from services.navigator.models import configured_models
from services.navigator.navigate import navigate
from shared.model.query import QuerySettings
from shared.settings import get_settings
from shared.text.page_references import asks_about_the_document, find_page_mentions

logger = logging.getLogger("bench.page_questions")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="folder with qa/*.jsonl and pdfs/ (default: ../shared/data)")
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    args = parser.parse_args(argv)
    configure_bench_logging()
    collections, indexes = dev_sets(args.data, args.store)
    settings = QuerySettings()
    models = configured_models(get_settings())
    for name, items in sorted(collections.items()):
        counts = {"all": [0, 0, 0], "page-naming": [0, 0, 0]}  # questions, gold page first, refused
        for item in items:
            if not item.answerable or not item.evidence_pages:
                continue
            result = navigate(item.question, [indexes[item.doc]], settings, models=models)
            top = result.passages[0].pages[0] if result.passages else None
            kinds = ["all"]
            if find_page_mentions(item.question) or asks_about_the_document(item.question):
                kinds.append("page-naming")
            for kind in kinds:
                counts[kind][0] += 1
                counts[kind][1] += top in item.evidence_pages
                counts[kind][2] += top is None
        for kind, (n, first, refused) in counts.items():
            print(f"{name} {kind}: {n} questions, gold page first {first}, refused {refused}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
