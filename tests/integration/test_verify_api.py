"""`POST /v1/verify`: any answer checked sentence by sentence against stored pages it cites."""

from __future__ import annotations

import pytest

from tests.support.integration.pdfs import TOPICS, manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration


def test_verify_returns_each_sentence_verdict_with_its_evidence_offsets(gateway: Gateway,
                                                                      indexer: ServiceProcess) -> None:
    document = upload_ready(gateway, manual_pdf(unit=131), "unit-131.pdf")
    doc_id = document["doc_id"]
    page = gateway.get(f"/v1/documents/{doc_id}/pages/2", timeout=10).json()["text"]
    assert "opens at a pressure of 141 bar" in page
    answer = ("Each safety valve of unit 131 opens at a pressure of 141 bar [unit-131.pdf, p. 2]. "
              "Each safety valve of unit 131 opens at a pressure of 147 bar.")
    response = gateway.post("/v1/verify", timeout=30,
                          json={"answer": answer, "citations": [{"doc_id": doc_id, "pages": [1, 2]}]})
    assert response.status_code == 200, response.text
    body = response.json()
    verdicts = [s["verdict"] for s in body["sentences"]]
    assert verdicts == ["supported", "contradicted"]
    assert body["supported"] == 1 and body["contradicted"] == 1
    window = body["sentences"][0]["window"]
    assert window["doc_id"] == doc_id and window["page"] == 2
    assert "141 bar" in page[window["start"] : window["end"]]
    assert "147" in body["sentences"][1]["reason"]


def test_verify_refuses_pages_the_document_does_not_have(gateway: Gateway, indexer: ServiceProcess) -> None:
    document = upload_ready(gateway, manual_pdf(unit=132), "unit-132.pdf")
    response = gateway.post("/v1/verify", timeout=30, json={
        "answer": "Anything.", "citations": [{"doc_id": document["doc_id"], "pages": [len(TOPICS) + 5]}]})
    assert response.status_code == 404 and "has no page" in response.json()["detail"]
    empty = gateway.post("/v1/verify", timeout=30, json={"answer": "Anything.", "citations": []})
    assert empty.status_code == 422
