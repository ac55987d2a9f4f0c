"""Off-topic abstention: every question of each ../shared/data/qa/*.jsonl collection asked of
every document of the other collections (they have no answer there), and every answerable
question asked of its own document (it must not abstain).

    python -m bench.abstention [--store DIR]

Writes bench/results/abstention.json.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from bench.common import (
    configure_bench_logging,
    run_in_store,
    shared_data,
    write_result,
)
from shared.adapters.embedded.store import EmbeddedRepository
from treerag.evaluation.abstention import off_topic_abstention
from treerag.evaluation.dataset import load_dataset
from treerag.evaluation.runner import ensure_indexed

logger = logging.getLogger("bench.abstention")


async def main_async(store: Path) -> dict[str, Any]:
    data = shared_data()
    collections = {path.stem: load_dataset(path) for path in sorted((data / "qa").glob("*.jsonl"))}
    repository = EmbeddedRepository(store)
    names = [item.doc for items in collections.values() for item in items]
    bundles = await ensure_indexed(repository, names, data / "pdfs")
    await repository.close()
    started = time.perf_counter()
    report = off_topic_abstention(collections, {name: b.index for name, b in bundles.items()})
    result = {
        "collections": {name: {"questions": len(items), "documents": len({i.doc for i in items})}
                        for name, items in collections.items()},
        **report.model_dump(),
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_result("abstention", result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="Embedded store to index into (default: a temp dir).")
    args = parser.parse_args()
    configure_bench_logging()
    result = run_in_store(main_async, args.store, "treerag-abstention-")
    print(
        f"off-topic abstained {result['off_topic_abstained']}/{result['off_topic_pairs']} "
        f"({result['off_topic_share_abstained']:.0%}); answerable wrongly abstained "
        f"{result['answerable_wrongly_abstained']}/{result['answerable_questions']}"
    )


if __name__ == "__main__":
    main()
