"""Every panel of every Grafana dashboard shows data under a real Prometheus after real traffic.

Debian's `prometheus` scrapes every process of the integration stack (two indexers among them)
with `deploy/prometheus/prometheus.local.yml` and its rules; a scripted workload uploads PDFs
(one corrupt), asks questions, and forces a message into a dead-letter topic. Then each panel
query, as Grafana would send it, must return at least one series with a value.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.integration.kafka_tools import publish
from tests.support.integration.pdfs import TOPICS, corrupt_pdf, manual_pdf
from tests.support.integration.prometheus import (
    BUILT_INS,
    Prometheus,
    panel_queries,
    substitute,
    template_variables,
    wait_for_scrapes,
)
from tests.support.integration.stack import Gateway, ServiceProcess, Stack
from tests.support.integration.uploads import upload, wait_document

pytestmark = pytest.mark.integration

TIME_BOUND_S = 90.0
JOBS = ["gateway", "indexer", "navigator", "compressor", "verifier"]


def job_of(process: ServiceProcess) -> str:
    return process.name.rsplit("-", 1)[0]


@pytest.fixture
def two_indexers(stack: Stack) -> Iterator[list[ServiceProcess]]:
    started = [stack.start_stage("indexer"), stack.start_stage("indexer")]
    try:
        for process in started:
            stack.wait_consuming(process)
        yield started
    finally:
        stack.stop_many(started)


@pytest.fixture
def prometheus(stack: Stack, gateways: list[Gateway], two_indexers: list[ServiceProcess],
               tmp_path: Path) -> Iterator[Prometheus]:
    targets: dict[str, list[str]] = {job: [] for job in JOBS}
    for process in stack.processes:
        if process.alive and process.metrics_port:
            targets[job_of(process)].append(f"127.0.0.1:{process.metrics_port}")
    server = Prometheus.start(tmp_path / "prometheus", targets)
    try:
        yield server
    finally:
        server.stop()


def ask(gateway: Gateway, question: str, doc_id: str) -> httpx.Response:
    return gateway.post("/v1/query", json={"question": question, "doc_ids": [doc_id]}, timeout=60)


def has_value(series: dict[str, object]) -> bool:
    value = float(series["value"][1])  # type: ignore[index]
    return not math.isnan(value)


def test_every_panel_returns_data_after_uploads_queries_a_failure_and_a_dead_letter(
    stack: Stack, gateway: Gateway, two_indexers: list[ServiceProcess], prometheus: Prometheus
) -> None:
    began = time.monotonic()
    wait_for_scrapes(prometheus, JOBS, rounds=1)  # the zero series are in before any traffic

    # Uploads: two manuals (new bytes each run) and a corrupt PDF.
    units = random.sample(range(5000, 9000), 2)
    manuals = {unit: manual_pdf(unit=unit) for unit in units}
    accepted = [upload(gateway, data, f"unit-{unit}.pdf").json() for unit, data in manuals.items()]
    broken = upload(gateway, corrupt_pdf() + f"{units}".encode(), "broken.pdf").json()
    documents = [wait_document(gateway, a["doc_id"]) for a in accepted]
    assert [d["status"] for d in documents] == ["ready", "ready"], documents
    assert wait_document(gateway, broken["doc_id"])["status"] == "failed"

    # Queries: answered, asked again (answer cache), and one the document cannot answer.
    first = documents[0]["doc_id"]
    question = f"At what pressure does the safety valve of unit {units[0]} open?"
    for text in (question, question, "Who painted the ceiling of the Sistine Chapel?"):
        response = ask(gateway, text, first)
        assert response.status_code == 200, response.text + stack.logs()
    timings = ask(gateway, f"How often is the coolant pump of unit {units[0]} serviced?", first).json()["timings"]

    # A message no stage can read goes to the indexer's dead-letter topic.
    asyncio.run(publish(stack.kafka_bootstrap, stack.topic("document.uploaded"), b"{not an event", "garbage"))

    wait_for_scrapes(prometheus, JOBS, rounds=2)
    variables = {**BUILT_INS}
    for name, variable in template_variables().items():
        # A variable's query must find values; "All" is the regex of every one of them.
        query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
        series, label = query.removeprefix("label_values(").removesuffix(")").rsplit(",", 1)
        values = prometheus.api(f"label/{label.strip()}/values", **{"match[]": series.strip()})
        assert values, f"dashboard variable ${name} ({query}) has no values"
        variables[name] = "|".join(values)

    empty = [str(panel) for panel in panel_queries()
             if not any(has_value(s) for s in prometheus.query(substitute(panel.expr, variables)))]
    assert not empty, f"{len(empty)} panel queries return no data:\n" + "\n".join(empty)

    # What the panels say is what happened.
    assert prometheus.value('count(up{job="indexer"} == 1)') == 2
    pages = sum(d["page_count"] for d in documents)
    assert prometheus.value("sum(treerag_pages_indexed_total)") == pages == 2 * len(TOPICS)
    assert prometheus.value('sum(treerag_documents_total{status="failed"})') == 1
    assert prometheus.value('sum(treerag_queries_total{outcome=~"answered|abstained"})') >= 4
    stages = {s["metric"]["stage"] for s in prometheus.query(
        'sum by (stage) (treerag_query_stage_seconds_count{phase="processing"}) > 0')}
    assert stages == {"navigator", "compressor", "verifier"}
    assert [t["stage"] for t in timings["stages"]] == ["navigator", "compressor", "verifier"]
    firing = {(a["labels"]["alertname"], a["labels"].get("stage")) for a in prometheus.api("alerts")["alerts"]
              if a["state"] == "firing"}
    assert ("TreeRAGDeadLetters", "indexer") in firing, firing
    assert not {name for name, _ in firing} & {"TreeRAGStageDown", "TreeRAGReplicaDown"}, firing

    elapsed = time.monotonic() - began
    assert elapsed < TIME_BOUND_S, f"the workload and the checks took {elapsed:.0f} s (bound {TIME_BOUND_S:.0f} s)"
