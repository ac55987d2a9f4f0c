"""Fit the shipped ranking and abstention model on every dev question set:

    python -m bench.fit_ranker [--data DIR] [--store DIR] [--out services/navigator/ranking/model.json]
                               [--dense-only]

Explores every question of DATA/qa/*.jsonl (by default ../shared/data) on its own document
(PDFs from DATA/pdfs), every question on one document of each other collection (off-topic
negatives), on one document of its own collection that never mentions a name it uses
(missing-name negatives) and on its own document with its evidence pages blanked
(evidence-removed negatives), fits the model (`treerag.evaluation.fitting`) and writes it as
JSON, with the lexical-only variant beside it (`model-lexical.json`, used when embeddings are
off; not with `--dense-only`, which fits the model of another embedder: set
`TREERAG_EMBEDDINGS*` to it and give its `--out`, e.g. `model-bge-small.json`).
Deterministic: the same data and code write the same file. Held-out figures of this procedure: `treerag eval --folds 5`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from bench.common import configure_bench_logging, shared_data
from services.navigator.index import DocumentIndex
from services.navigator.ranking.model import MODEL_PATH
from shared.model.query import QuerySettings
from treerag.commands.eval import load_collections, load_pool, pool_names
from treerag.evaluation.dataset import QAItem
from treerag.evaluation.fitting import fit_collections

logger = logging.getLogger("bench.fit_ranker")


def dev_sets(data: Path | None, store: Path) -> tuple[dict[str, list[QAItem]], dict[str, DocumentIndex]]:
    """Every question set of DATA/qa/*.jsonl (default ../shared/data) and the index of each of
    their documents, indexed into `store` when missing."""
    data = data or shared_data()
    datasets = sorted((data / "qa").glob("*.jsonl"))
    collections, bundles = asyncio.run(load_collections(datasets, data / "pdfs", store))
    return collections, {name: b.index for name, b in bundles.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="folder with qa/*.jsonl and pdfs/ (default: ../shared/data)")
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--pool", type=Path, action="append", default=[],
                        help="a folder whose every document joins the routing shelf of the questions whose "
                        "documents it holds (a shared store; repeatable)")
    parser.add_argument("--dense-only", action="store_true",
                        help="write the configured embedder's model only, not the lexical one beside it")
    args = parser.parse_args(argv)
    configure_bench_logging()
    collections, indexes = dev_sets(args.data, args.store)
    pool: list[str] = []
    for folder in args.pool:
        names = pool_names(folder)
        indexes |= {name: b.index for name, b in asyncio.run(load_pool(names, folder, args.store)).items()}
        pool += names
    model, lexical = fit_collections(collections, indexes, QuerySettings(), lexical=not args.dense_only, pool=pool)
    written = [(args.out, model)]
    if lexical is not None:
        written.append((args.out.with_name(args.out.stem + "-lexical.json"), lexical))
    for path, fitted in written:
        path.write_text(fitted.to_json(), encoding="utf-8")
        logger.info("wrote %s (model %s)", path, fitted.digest())
        print(f"wrote {path} (model {fitted.digest()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
