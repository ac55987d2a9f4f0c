"""Fit the shipped reranking weight (`services/navigator/ranking/rerank.json`) on every dev set:

    TREERAG_RERANKER=DIR python -m bench.fit_reranker [--data DIR] [--store DIR] [--out PATH]

Explores every question of DATA/qa/*.jsonl on its own document and on one document of each
other collection (off-topic), as `bench.fit_ranker` does, orders the candidates with the
shipped ranking model, and fits the weight and the answer decision of the cross-encoder in DIR
(`treerag.evaluation.rerank_fit`). Deterministic for the same data, code
and model. Held-out figures of this procedure: `make eval-rerank`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from bench.common import configure_bench_logging
from bench.fit_ranker import dev_sets
from services.navigator.models import configured_models
from services.navigator.ranking.rerank import RERANK_MODEL_PATH
from shared.adapters.reranker import configured_scorer
from shared.model.query import QuerySettings
from shared.settings import get_settings
from treerag.evaluation.fitting import explore_examples, negative_pairs
from treerag.evaluation.rerank_fit import fit_rerank

logger = logging.getLogger("bench.fit_reranker")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="folder with qa/*.jsonl and pdfs/ (default: ../shared/data)")
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    parser.add_argument("--out", type=Path, default=RERANK_MODEL_PATH)
    args = parser.parse_args(argv)
    configure_bench_logging()
    scorer = configured_scorer(get_settings().reranker)
    if scorer is None:
        parser.error("set TREERAG_RERANKER to the reranker's folder (scripts/models/reranker.sh path)")
    collections, indexes = dev_sets(args.data, args.store)
    items = [item for name in sorted(collections) for item in collections[name]]
    labelled, negatives = explore_examples(items, negative_pairs(collections, indexes), indexes, QuerySettings())
    model = configured_models(get_settings()).ranking
    fitted = fit_rerank(labelled + negatives, model, scorer, {"datasets": ",".join(sorted(collections))})
    args.out.write_text(fitted.to_json(), encoding="utf-8")
    logger.info("wrote %s (weight %s for %s)", args.out, fitted.weight, fitted.scorer)
    print(f"wrote {args.out} (weight {fitted.weight:g} for {fitted.scorer})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
