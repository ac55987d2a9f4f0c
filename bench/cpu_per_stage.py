"""CPU seconds per page (ingestion) and per query (each concurrency) for every stage, from the
stages' own `process_cpu_seconds_total` as read around each run (Kafka and FerretDB from /proc)."""

from __future__ import annotations

import json
from typing import Any

from bench.common import RESULTS, write_result


def summarize(ingest: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    per_page = {run["label"]: run["cpu_s_per_page"] for run in ingest.get("runs", [])}
    per_query = {f"bus, concurrency {level['concurrency']}": level["cpu_s_per_query"] for level in query.get("bus", [])}
    utilisation = {run["label"]: run["machine"]["utilisation"] for run in ingest.get("runs", [])}
    utilisation.update({f"queries, concurrency {lv['concurrency']}": lv["machine"]["utilisation"] for lv in query.get("bus", [])})
    return {"cpu_s_per_page": per_page, "cpu_s_per_query": per_query, "machine_utilisation": utilisation}


def main() -> int:
    ingest = json.loads((RESULTS / "bus_ingest.json").read_text())
    query = json.loads((RESULTS / "bus_query.json").read_text())
    write_result("cpu_per_stage", summarize(ingest, query))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
