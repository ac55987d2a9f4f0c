"""Bytes per query on the bus: every event a question's stages publish, serialised as on Kafka
(the event's JSON as published: whole pages by reference, `Event.as_published`), summed by
topic, over the r-manuals dev questions in one process.

It also reports, from the same run, what the events weighed with the selected pages' text
inline in `nodes.selected`, and with `context.compressed` repeating the whole navigation result
(page texts included) instead of the navigation summary the verifier reads.

    python -m bench.event_sizes [--store DIR] [--dataset r-manuals-dev]
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, run_in_store, shared_data, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.memory.bus import InMemoryBus
from shared.adapters.memory.document_keys import InMemoryDocumentKeys
from shared.adapters.sealing import EventSealer
from shared.model.events import ContextCompressed, Event, NodesSelected
from shared.model.query import QuerySettings
from treerag.engine import QueryEngine
from treerag.evaluation.dataset import load_dataset
from treerag.evaluation.runner import ensure_indexed


class SizeLog:
    """The serialised size of every event published, by query and topic."""

    def __init__(self) -> None:
        self.sizes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.navigation_bytes: dict[str, int] = defaultdict(int)
        self.summary_bytes: dict[str, int] = defaultdict(int)
        self.sealed: dict[str, int] = defaultdict(int)
        self.inline: dict[str, int] = defaultdict(int)
        self._sealer = EventSealer(InMemoryDocumentKeys())

    async def record(self, event: Event) -> None:
        query_id = getattr(event, "query_id", None)
        if query_id is None:
            return
        published = event.as_published()
        self.sizes[query_id][event.TOPIC] += len(published.model_dump_json().encode())
        self.inline[query_id] += len(event.model_dump_json().encode())
        # As the services publish it: its document text sealed (shared/adapters/sealing.py).
        self.sealed[query_id] += len((await self._sealer.seal(published)).model_dump_json().encode())
        if isinstance(event, NodesSelected):
            self.navigation_bytes[query_id] += len(event.navigation.model_dump_json().encode())
        if isinstance(event, ContextCompressed):
            self.summary_bytes[query_id] += len(event.navigation.model_dump_json().encode())


def recording(log: SizeLog) -> None:
    """Every in-memory bus of this process reports what it publishes to `log`."""
    publish = InMemoryBus.publish

    async def publish_and_record(self: InMemoryBus, event: Event) -> None:
        await publish(self, event)
        await log.record(event)

    InMemoryBus.publish = publish_and_record  # type: ignore[method-assign]


def summary(log: SizeLog) -> dict[str, Any]:
    queries = list(log.sizes)
    totals = [sum(log.sizes[q].values()) for q in queries]
    inline = [log.inline[q] for q in queries]
    before = [total - log.summary_bytes[q] + log.navigation_bytes[q] for q, total in zip(queries, inline, strict=True)]
    topics = sorted({t for q in queries for t in log.sizes[q]})
    return {
        "queries": len(queries),
        "bytes_per_query_mean": round(statistics.mean(totals)),
        "bytes_per_query_median": round(statistics.median(totals)),
        "bytes_per_query_mean_sealed": round(statistics.mean(log.sealed[q] for q in queries)),
        "bytes_per_query_mean_with_pages_inline": round(statistics.mean(inline)),
        "bytes_per_query_mean_with_navigation_result": round(statistics.mean(before)),
        "bytes_per_query_median_with_navigation_result": round(statistics.median(before)),
        "by_topic_mean": {t: round(statistics.mean(log.sizes[q].get(t, 0) for q in queries)) for t in topics},
    }


async def main_async(store: Path, dataset: str) -> dict[str, Any]:
    data = shared_data()
    items = load_dataset(data / "qa" / f"{dataset}.jsonl")
    repository = EmbeddedRepository(store)
    await ensure_indexed(repository, [i.doc for i in items], data / "pdfs")
    names = {i.doc for i in items}
    ids = [r.doc_id for r in await repository.list_documents() if r.file_name in names]
    engine = QueryEngine(repository)
    await engine.indexes(ids)
    log = SizeLog()
    recording(log)
    for item in items:
        await engine.ask(item.question, ids, QuerySettings())
    await repository.close()
    return write_result("event_sizes", {"dataset": dataset, "documents": len(ids), **summary(log)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="Embedded store holding the documents.")
    parser.add_argument("--dataset", default="r-manuals-dev", help="A ../shared/data/qa/<name>.jsonl set.")
    args = parser.parse_args()
    configure_bench_logging()
    result = run_in_store(lambda store: main_async(store, args.dataset), args.store, "treerag-events-")
    print(f"{result['queries']} queries: {result['bytes_per_query_mean']} bytes per query on the bus (mean), "
          f"{result['bytes_per_query_mean_sealed']} with the document text sealed, "
          f"{result['bytes_per_query_mean_with_pages_inline']} with the selected pages' text inline, "
          f"{result['bytes_per_query_mean_with_navigation_result']} with the navigation result repeated")


if __name__ == "__main__":
    main()
