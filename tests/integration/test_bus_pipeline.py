"""Upload over HTTP, answer through the bus: the same answer as the one-process pipeline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.indexer.pipeline import index_pdf
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.events import QueryProgress
from shared.model.query import QuerySettings
from tests.support.integration.kafka_tools import opened, read_topic
from tests.support.integration.pdfs import TOPICS, corrupt_pdf, manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until
from tests.support.integration.uploads import upload, upload_ready, wait_document
from treerag.engine import QueryEngine

pytestmark = pytest.mark.integration


async def one_process_answer(data: bytes, file_name: str, question: str, settings: QuerySettings,
                             store: Path) -> Any:
    repo = EmbeddedRepository(store)
    indexed = index_pdf(data, file_name)
    await repo.put_indexed(indexed)
    return await QueryEngine(repo).ask(question, [indexed.record.doc_id], settings)


def ask(gateway: Gateway, question: str, **body: Any) -> httpx.Response:
    return gateway.post("/v1/query", json={"question": question, **body}, timeout=120)


async def test_uploaded_pdf_is_answered_with_the_one_process_citations(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, tmp_path: Path
) -> None:
    data = manual_pdf(unit=101)
    document = upload_ready(gateway, data, "unit-101.pdf")
    assert document["page_count"] == len(TOPICS) and document["builder"] == "outline"

    tree = gateway.get(f"/v1/documents/{document['doc_id']}/tree", timeout=10).json()
    assert [n["title"] for n in tree["nodes"]][:2] == ["1 Pump maintenance", "2 Safety valves"]
    page = gateway.get(f"/v1/documents/{document['doc_id']}/pages/2", timeout=10).json()
    assert "opens at a pressure of 111 bar" in page["text"]
    pdf = gateway.get(f"/v1/documents/{document['doc_id']}/pdf", timeout=10)
    assert pdf.content == data and pdf.headers["content-type"] == "application/pdf"

    # Non-default settings must travel with the query and be applied by every stage.
    question = "At what pressure does the safety valve of unit 101 open?"
    settings = QuerySettings(mode="beam", beam_width=3, token_budget=600)
    response = ask(gateway, question, doc_ids=[document["doc_id"]], mode="beam",
                   settings={"beam_width": 3, "token_budget": 600})
    assert response.status_code == 200, response.text + stack.logs()
    body = response.json()

    expected = await one_process_answer(data, "unit-101.pdf", question, settings, tmp_path / "store")
    assert body["answer"] == expected.answer.answer
    assert body["citations"] == [c.model_dump() for c in expected.answer.citations]
    assert body["confidence"] == pytest.approx(expected.answer.confidence)
    assert body["mode"] == expected.mode == "beam"
    assert body["warnings"] == expected.warnings
    assert body["tokens_after"] == expected.tokens_after
    # And the answer is the right one: the safety-valve page, with the unit's own pressure.
    assert "111 bar" in body["answer"]
    assert body["citations"][0]["pages"] == [2] and body["citations"][0]["file_name"] == "unit-101.pdf"

    stages = [t["stage"] for t in body["timings"]["stages"]]
    assert stages == ["navigator", "compressor", "verifier"]
    assert all(t["queued_ms"] >= 0 and t["processing_ms"] > 0 for t in body["timings"]["stages"])
    stored = gateway.get(f"/v1/queries/{body['query_id']}", timeout=10).json()
    assert stored["status"] == "answered" and stored["answer"] == body["answer"]
    assert [t["stage"] for t in stored["timings"]["stages"]] == stages

    # The same question, settings and document version again: answered from the cache by the
    # first stage, with the same answer.
    again = ask(gateway, question, doc_ids=[document["doc_id"]], mode="beam",
                settings={"beam_width": 3, "token_budget": 600}).json()
    assert again["query_id"] != body["query_id"]
    assert (again["answer"], again["citations"]) == (body["answer"], body["citations"])
    assert [t["stage"] for t in again["timings"]["stages"]] == ["navigator"]
    other = ask(gateway, question, doc_ids=[document["doc_id"]], mode="beam", settings={"beam_width": 4}).json()
    assert len(other["timings"]["stages"]) == 3, "a different setting must not hit the cache"

    metrics = gateway.get("/metrics", timeout=10).text
    query_topic = stack.topic("query.received")
    assert f'treerag_messages_published_total{{stage="gateway",topic="{query_topic}"}}' in metrics
    assert 'treerag_http_request_seconds_count{method="POST",route="/v1/query",status="200"}' in metrics


def test_async_query_returns_202_and_the_answer_is_polled(
    gateway: Gateway, indexer: ServiceProcess
) -> None:
    document = upload_ready(gateway, manual_pdf(unit=102), "unit-102.pdf")
    response = ask(gateway, "How often is the coolant pump serviced?", doc_ids=[document["doc_id"]],
                   **{"async": True})
    assert response.status_code == 202, response.text
    query_id = response.json()["query_id"]

    def answered() -> dict[str, Any] | None:
        body = gateway.get(f"/v1/queries/{query_id}", timeout=10).json()
        return body if body["status"] != "pending" else None

    body = wait_until(answered, 60, "the async query to be answered")
    assert body["status"] == "answered"
    assert "1520 operating hours" in body["answer"]
    assert body["citations"][0]["pages"] == [1]


def test_corrupt_pdf_fails_with_its_reason_and_the_next_upload_is_unaffected(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    bad = upload(gateway, corrupt_pdf(), "broken.pdf")
    assert bad.status_code == 202, bad.text
    failed = wait_document(gateway, bad.json()["doc_id"])
    assert failed["status"] == "failed"
    assert "corrupt" in failed["reason"]

    good = upload_ready(gateway, manual_pdf(unit=103), "unit-103.pdf")
    assert good["status"] == "ready" and good["reason"] is None
    assert indexer.alive, stack.logs()

    # Asking over a failed document says why, at once.
    response = ask(gateway, "What is in it?", doc_ids=[failed["doc_id"]])
    assert response.status_code == 409 and "corrupt" in response.json()["detail"]


def test_upload_checks_type_and_size(gateway: Gateway) -> None:
    not_pdf = upload(gateway, b"hello, this is plain text", "notes.pdf")
    assert not_pdf.status_code == 415 and "not a PDF" in not_pdf.json()["detail"]
    unknown_kind = upload(gateway, bytes(range(256)) * 8, "blob", "application/octet-stream")
    assert unknown_kind.status_code == 415 and "not a supported document" in unknown_kind.json()["detail"]
    empty = upload(gateway, b"", "empty.pdf")
    assert empty.status_code == 400
    unknown = ask(gateway, "anything?", doc_ids=["0000000000000000"])
    assert unknown.status_code == 404
    bad_setting = ask(gateway, "anything?", settings={"beam_width": 0})
    assert bad_setting.status_code == 422


async def test_two_gateways_answer_20_concurrent_queries_each_with_its_own_answer(
    gateways: list[Gateway], indexer: ServiceProcess, stack: Stack
) -> None:
    units = [111, 112, 113, 114]
    doc_ids = {unit: upload_ready(gateways[0], manual_pdf(unit=unit), f"unit-{unit}.pdf")["doc_id"]
               for unit in units}
    # 4 documents x 5 topics: 20 different questions with 20 different right answers.
    questions = {
        "pump": ("How many operating hours between services of the coolant pump of unit {u}?",
                 "{h} operating hours", 1),
        "valve": ("At what pressure does the safety valve of unit {u} open?", "{p} bar", 2),
        "shutdown": ("Which control room has the red panel for an emergency shutdown of unit {u}?",
                     "control room C{u}", 3),
        "filter": ("After how many days are the intake filters of unit {u} replaced?", "{f} days", 4),
        "oil": ("Which synthetic oil type do the gearboxes of unit {u} receive?", "oil type L{u}", 5),
    }
    cases = []
    for unit in units:
        values = {"u": unit, "h": 500 + 10 * unit, "p": 10 + unit, "f": 30 + unit}
        for template, fact, page in questions.values():
            cases.append((template.format(**values), fact.format(**values), doc_ids[unit], page))
    assert len(cases) == 20

    async with httpx.AsyncClient(timeout=180) as client:
        async def ask_one(i: int, case: tuple[str, str, str, int]) -> tuple[tuple[str, str, str, int], Any]:
            gateway = gateways[i % 2]
            response = await client.post(f"{gateway.url}/v1/query", headers=gateway.auth,
                                         json={"question": case[0], "doc_ids": [case[2]]})
            return case, response

        results = await asyncio.gather(*(ask_one(i, case) for i, case in enumerate(cases)))

    query_ids = set()
    for (question, fact, doc_id, page), response in results:
        assert response.status_code == 200, response.text + stack.logs()
        body = response.json()
        query_ids.add(body["query_id"])
        assert body["question"] == question
        assert fact in body["answer"], (question, body["answer"])
        assert body["citations"][0]["doc_id"] == doc_id and body["citations"][0]["pages"] == [page]
    assert len(query_ids) == 20


async def test_same_bytes_are_indexed_once_unless_another_builder_is_asked_for(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess
) -> None:
    data = manual_pdf(unit=303)
    document = upload_ready(gateway, data, "보고서-303.pdf")
    assert document["builder"] == "outline"

    again = upload(gateway, data, "보고서-303.pdf")
    assert again.status_code == 202 and again.json()["duplicate"] is True
    assert again.json()["status"] == "ready"  # nothing to do: no second indexing

    rebuilt = upload(gateway, data, "보고서-303.pdf", builder="windows")
    assert rebuilt.status_code == 202 and rebuilt.json()["status"] == "uploaded"
    wait_until(
        lambda: gateway.get(f"/v1/documents/{document['doc_id']}", timeout=10).json()["builder"] == "windows"
        or None,
        120, "the rebuild with the windows builder",
    )
    assert wait_document(gateway, document["doc_id"])["status"] == "ready"

    # A file name outside latin-1 still downloads, named in the RFC 6266 UTF-8 form.
    pdf = gateway.get(f"/v1/documents/{document['doc_id']}/pdf", timeout=10)
    assert pdf.status_code == 200 and pdf.content == data
    assert "filename*=UTF-8''%EB%B3%B4%EA%B3%A0%EC%84%9C-303.pdf" in pdf.headers["content-disposition"]


async def test_navigator_indexes_a_new_tree_before_any_query_asks_for_it(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess]
) -> None:
    navigator = next(p for p in query_stages if p.name.startswith("navigator"))
    data = manual_pdf(unit=404)
    document = upload_ready(gateway, data, "unit-404.pdf")

    def warmed(version: int) -> bool | None:
        return any(r.get("msg") == "index warmed" and r.get("doc_id") == document["doc_id"]
                   and r.get("version") == version for r in navigator.log_records()) or None

    # From `tree.built`, not from a query: nobody has asked about this document yet.
    wait_until(lambda: warmed(1), 60, "the navigator to index the new tree", interval_s=0.25)

    rebuilt = upload(gateway, data, "unit-404.pdf", builder="windows")
    assert rebuilt.status_code == 202
    wait_until(lambda: warmed(2), 120, "the navigator to index the rebuilt tree", interval_s=0.25)
    response = ask(gateway, "At what pressure does the safety valve of unit 404 open?",
                   doc_ids=[document["doc_id"]])
    assert response.status_code == 200 and "414 bar" in response.json()["answer"], response.text


def server_sent(text: str) -> list[tuple[str, dict[str, Any]]]:
    parsed = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        parsed.append((lines["event"], json.loads(lines["data"])))
    return parsed


def test_a_streamed_query_gets_the_route_then_each_sentence_the_stages_put_on_the_bus(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, db: Any
) -> None:
    doc_id = upload_ready(gateway, manual_pdf(unit=207), "unit-207.pdf")["doc_id"]
    response = gateway.post("/v1/query", json={"question": "At what pressure does the safety valve of unit 207 open?",
                                               "doc_ids": [doc_id]},
                            headers={"Accept": "text/event-stream"}, timeout=120)
    received = server_sent(response.text)
    assert [name for name, _ in received][:2] == ["accepted", "routed"] and received[-1][0] == "answer", response.text
    answer = received[-1][1]
    assert "217 bar" in answer["answer"]
    routed = received[1][1]
    assert routed["documents"] == [doc_id] and {"doc_id": doc_id, "page": 2} in routed["pages"]
    sentences = [data for name, data in received if name == "sentence"]
    assert [s.pop("index") for s in sentences] == list(range(len(answer["sentences"])))
    assert sentences == answer["sentences"]

    # The stages published the route and each sentence, the sentences' text sealed.
    query_id = answer["query_id"]
    held = [r.value for r in asyncio.run(read_topic(stack.kafka_bootstrap, stack.topic(QueryProgress.TOPIC)))
            if r.key == query_id.encode()]
    assert not any(b"217 bar" in value for value in held)
    progress = [asyncio.run(opened(db, QueryProgress, value)) for value in held]
    assert sorted(p.step for p in progress) == ["routed"] + ["sentence"] * len(sentences)
    assert [p.sentence.text for p in sorted(progress, key=lambda p: p.index) if p.sentence] == \
        [s["text"] for s in sentences]

    plain = ask(gateway, "At what pressure does the safety valve of unit 207 open?", doc_ids=[doc_id],
                settings={"token_budget": 700})
    assert plain.status_code == 200
    assert not [r for r in asyncio.run(read_topic(stack.kafka_bootstrap, stack.topic(QueryProgress.TOPIC)))
                if r.key == plain.json()["query_id"].encode()]
