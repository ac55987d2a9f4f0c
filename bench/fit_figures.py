"""The figure reader's thresholds fitted with each collection, then each fold of documents, held out
(`treerag/evaluation/figure_fit.py`):

    python -m bench.fit_figures [ITEMS] [--store DIR]  ->  bench/results/figure_fit.json

ITEMS is the per-question file of `treerag eval --split collection --items` (by default
bench/results/cv_collections.items.json); the pages are read from the store that run used
(by default /tmp/treerag-eval-store, `make eval`'s). The document folds are `--folds` folds of
the questions' documents (`folds.assign_folds`), so that a filing's statement tables are fitted
on other filings'. The shipped thresholds stay as they are: this reports whether the training
folds would choose them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from bench.common import RESULTS, configure_bench_logging, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from treerag.evaluation.crossval import Outcome
from treerag.evaluation.dataset import QAItem
from treerag.evaluation.figure_fit import FigureCase, fit_figures
from treerag.evaluation.folds import assign_folds

DEFAULT_ITEMS = RESULTS / "cv_collections.items.json"
DEFAULT_STORE = Path("/tmp/treerag-eval-store")
SYSTEM = "treerag-auto"


async def _pages(store: Path, names: set[str]) -> dict[str, list[str]]:
    repository = EmbeddedRepository(store)
    pages: dict[str, list[str]] = {}
    for name in sorted(names):
        record = await repository.find_document(name)
        if record is not None:
            pages[name] = await repository.get_pages(record.doc_id)
    return pages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", nargs="?", type=Path, default=DEFAULT_ITEMS)
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    configure_bench_logging()
    outcomes = [Outcome.model_validate(o) for o in json.loads(args.items.read_text())]
    answered = [o for o in outcomes if o.system == SYSTEM and o.answerable and o.gold and not o.abstained]
    if not answered or not any(o.question for o in answered):
        raise SystemExit(f"{args.items} holds no answered questions with their text: rerun `make eval`")
    items = [QAItem(id=o.item_id, doc=o.gold[0][0], question=o.question, answer=o.gold_answer) for o in answered]
    fold_of = assign_folds(items, args.folds)
    by_collection = [FigureCase(o.collection, o.question, o.gold_answer, tuple(o.context)) for o in answered]
    by_document = [FigureCase(f"documents {fold_of[o.gold[0][0]]}", o.question, o.gold_answer, tuple(o.context))
                   for o in answered]
    pages = asyncio.run(_pages(args.store, {name for c in by_collection for name, _ in c.pages}))

    def page_text(name: str, number: int) -> str | None:
        found = pages.get(name, [])
        return found[number - 1] if 1 <= number <= len(found) else None

    fits = {"by_collection": fit_figures(by_collection, page_text), "by_document": fit_figures(by_document, page_text)}
    write_result("figure_fit", {"items": str(args.items), "answers": len(answered), "folds": args.folds,
                                **{name: fit.model_dump() for name, fit in fits.items()}})
    for split, fit in fits.items():
        for name, row in fit.held_out.items():
            print(f"{split} {name}: chosen {row.chosen} -> {row.chosen_leads.right} right, {row.chosen_leads.wrong} "
                  f"wrong; shipped {fit.shipped} -> {row.shipped_leads.right} right, {row.shipped_leads.wrong} wrong")
        print(f"{split}: fitted on all folds {fit.fitted_on_all}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
