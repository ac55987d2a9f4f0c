"""Honest failure: with Kafka or MongoDB down the gateway answers 503 with Retry-After within the
request's time budget (a query's `timeout_s`), and /readyz names a dead stage."""

from __future__ import annotations

import re
import subprocess
import time
from typing import Any

import httpx
import pytest

from shared.model.documents import DocumentRecord, DocumentStatus
from shared.settings import Settings
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import REPO, Gateway, ServiceProcess, Stack, wait_until
from tests.support.integration.uploads import upload, upload_ready

pytestmark = pytest.mark.integration

QUERY_TIMEOUT_S = 4.0
LATE_S = 1.0  # scheduling slack on a loaded 2-core machine


def run_infra(env: dict[str, str], script: str, action: str) -> None:
    result = subprocess.run([str(REPO / "scripts" / "infra" / script), action], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, f"{script} {action} failed: {result.stderr[-2000:]}"


def timed_query(gateway: Gateway, doc_id: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = gateway.post("/v1/query", timeout=60, json={
        "question": "How often is the coolant pump serviced?", "doc_ids": [doc_id], "timeout_s": QUERY_TIMEOUT_S})
    return response, time.monotonic() - started


def assert_unavailable(response: httpx.Response, backend: str) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) >= 1
    assert backend in response.json()["detail"]


def test_a_query_during_a_kafka_outage_is_503_within_its_timeout(
    infra: Any, stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    document = upload_ready(gateway, manual_pdf(unit=811), "unit-811.pdf")
    run_infra(infra.env, "kafka.sh", "stop")
    try:
        response, took = timed_query(gateway, document["doc_id"])
        assert took < QUERY_TIMEOUT_S + LATE_S, f"answered after {took:.1f}s"
        assert_unavailable(response, "Kafka")
        assert gateway.get("/v1/documents", timeout=30).status_code == 200  # the store is up
        ready = httpx.get(f"{gateway.url}/readyz", timeout=30)
        assert ready.status_code == 503 and "kafka" in ready.json()["missing"]
    finally:
        run_infra(infra.env, "kafka.sh", "start")
    wait_until(gateway.ready, 120, "the gateway to be ready once Kafka is back", interval_s=1)


def test_requests_during_a_store_outage_are_503_within_their_budget(
    infra: Any, stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    document = upload_ready(gateway, manual_pdf(unit=812), "unit-812.pdf")
    budget_s = 10.0  # TREERAG_REQUEST_TIMEOUT_S's default
    run_infra(infra.env, "ferretdb.sh", "stop")
    try:
        # Past the gateway's key cache (TREERAG_AUTH_CACHE_S, 5 s): the key's lookup meets the outage too.
        time.sleep(Settings().auth_cache_s + 1)
        response, took = timed_query(gateway, document["doc_id"])
        assert took < QUERY_TIMEOUT_S + LATE_S, f"answered after {took:.1f}s"
        assert response.status_code == 503 and int(response.headers["retry-after"]) >= 1, response.text
        for attempt in (lambda: gateway.get("/v1/documents", timeout=60),
                        lambda: upload(gateway, manual_pdf(unit=813), "unit-813.pdf")):
            started = time.monotonic()
            response = attempt()
            took = time.monotonic() - started
            assert took < budget_s + LATE_S, f"answered after {took:.1f}s"
            assert response.status_code == 503 and int(response.headers["retry-after"]) >= 1, response.text
        ready = httpx.get(f"{gateway.url}/readyz", timeout=30)
        assert ready.status_code == 503 and "mongodb" in ready.json()["missing"]
    finally:
        run_infra(infra.env, "ferretdb.sh", "start")
    wait_until(lambda: gateway.get("/v1/documents", timeout=30).status_code == 200, 120,
               "the gateway to read the store again")


def test_readyz_is_503_naming_a_stage_while_it_is_dead(stack: Stack) -> None:
    beats = {"TREERAG_HEARTBEAT_INTERVAL_S": "1"}
    indexer = stack.start_stage("indexer", **beats)
    checker = stack.start_gateway(TREERAG_READY_STAGES="indexer", TREERAG_HEARTBEAT_TTL_S="4")
    try:
        stack.wait_consuming(indexer)
        wait_until(checker.ready, 240, "the gateway to see the indexer alive", interval_s=0.5)
        body: dict[str, Any] = httpx.get(f"{checker.url}/readyz", timeout=10).json()
        assert body["stages"]["indexer"]["alive"] and body["missing"] == []

        indexer.kill()
        killed = time.monotonic()

        def not_ready() -> dict[str, Any] | None:
            response = httpx.get(f"{checker.url}/readyz", timeout=10)
            return response.json() if response.status_code == 503 else None

        body = wait_until(not_ready, 30, "/readyz to report the killed indexer")
        assert time.monotonic() - killed < 4 + 3
        assert body["missing"] == ["stage indexer"] and body["stages"]["indexer"]["alive"] is False

        replacement = stack.start_stage("indexer", **beats)
        stack.wait_consuming(replacement)
        wait_until(checker.ready, 60, "/readyz to see the new indexer", interval_s=0.5)
        stack.stop(replacement)
        # Stopped on purpose: its heartbeat is removed at once, not left to expire.
        body = wait_until(not_ready, 3, "/readyz to report the stopped indexer", interval_s=0.2)
        assert body["missing"] == ["stage indexer"]
    finally:
        stack.stop(indexer)
        stack.stop(checker.process)


def test_a_query_while_no_process_of_its_stages_is_alive_is_refused_at_once_with_its_id(stack: Stack) -> None:
    # A database of its own, where no stage has ever written a heartbeat, holding one ready document.
    database = f"{stack.db_name}_nostages"
    record = DocumentRecord(doc_id="5a" * 8, file_name="manual.pdf", status=DocumentStatus.READY, page_count=1)
    with stack.mongo() as client:
        client[database]["documents"].insert_one({**record.model_dump(mode="json"), "_id": record.doc_id})
    gateway = stack.start_gateway(TREERAG_MONGO_DB=database, TREERAG_AUTH="off")
    try:
        def serving() -> bool | None:
            gateway.process.check_alive()
            try:
                return httpx.get(f"{gateway.url}/healthz", timeout=5).status_code == 200 or None
            except httpx.TransportError:
                return None

        wait_until(serving, 120, "the gateway to start", interval_s=0.3)
        question = {"question": "How often is the coolant pump serviced?", "doc_ids": [record.doc_id], "timeout_s": 20}
        started = time.monotonic()
        refused = httpx.post(f"{gateway.url}/v1/query", json=question, timeout=60)
        assert time.monotonic() - started < 5  # not the query's 20 s
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        body = refused.json()
        assert body["unavailable"] == "stage navigator, compressor, verifier" and "no live process" in body["detail"]
        assert re.fullmatch(r"[0-9a-f]{32}", body["query_id"])
        assert any(r.get("query_id") == body["query_id"] for r in gateway.process.log_records())
        # An asynchronous query is still taken: it waits in Kafka for the stages to come back.
        queued = httpx.post(f"{gateway.url}/v1/query", json={**question, "async": True}, timeout=60)
        assert queued.status_code == 202, queued.text
    finally:
        stack.stop(gateway.process)
        with stack.mongo() as client:
            client.drop_database(database)
