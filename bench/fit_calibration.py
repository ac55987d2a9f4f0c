"""Fit the verifier's calibration on the held-out answers of a leave-one-collection-out run,
and report how well the confidence tracks correctness with each collection held out:

    python -m bench.fit_calibration [ITEMS] [--check]

ITEMS is the per-question file of `treerag eval --split collection --items` (by default
bench/results/cv_collections.items.json, which `make eval` writes). Writes the held-out report
to bench/results/calibration.json and, unless `--check`, the model fitted on every collection's
answers to services/verifier/calibration.json. Deterministic: the same answers write the same
file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from bench.common import RESULTS, configure_bench_logging, write_result
from services.verifier.calibration import SHIPPED
from treerag.evaluation.calibration import fit_calibration, held_out_report, labelled_answers
from treerag.evaluation.crossval import Outcome

DEFAULT_ITEMS = RESULTS / "cv_collections.items.json"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", nargs="?", type=Path, default=DEFAULT_ITEMS)
    parser.add_argument("--check", action="store_true", help="report only; keep the shipped model")
    args = parser.parse_args(argv)
    configure_bench_logging()
    if not args.items.is_file():
        raise SystemExit(f"{args.items} is missing: run `make eval` (or `treerag eval --split collection --items`)")
    outcomes = [Outcome.model_validate(o) for o in json.loads(args.items.read_text())]
    report = held_out_report(outcomes)
    write_result("calibration", {"items": str(args.items), **report.model_dump()})
    if not args.check:
        model = fit_calibration(labelled_answers(outcomes), fitted_on={"items": args.items.name})
        SHIPPED.write_text(model.model_dump_json(indent=2) + "\n")
    for name, row in report.held_out.items():
        print(f"{name}: {row.answers} answers, {row.right} right, ECE {row.ece}, "
              f"'likely right' {row.likely_right} ({row.likely_right_share_right})")
    if report.by_document is not None:
        row = report.by_document
        print(f"folds by document: ECE {row.ece}, 'likely right' {row.likely_right} ({row.likely_right_share_right})")
    print(f"support score as a probability: ECE {report.support_score.ece}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
