"""A query's HTTP response carries each answer sentence's verdict and evidence offsets."""

from __future__ import annotations

import pydantic
import pytest

from services.gateway.schemas import QueryResponse, VerifyRequest
from shared.model.events import QueryOutcome
from shared.model.queries import QueryRecord, QueryStatus
from shared.model.query import EvidenceWindow, SentenceCheck, VerifiedAnswer


def test_query_response_returns_sentence_verdicts_with_windows() -> None:
    check = SentenceCheck(text="Valves open at 12 bar.", citation=None, signals={"coverage": 1.0}, score=0.97,
                          grounded=True, verdict="supported", reason="the window covers 100% of the sentence",
                          window=EvidenceWindow(doc_id="d1", page=4, start=120, end=168, text="Each valve opens at 12 bar."))
    answer = VerifiedAnswer(question="At what pressure?", answer="Valves open at 12 bar. [plant.pdf, p. 4]",
                            sentences=[check], confidence=0.97)
    record = QueryRecord(query_id="q1", question="At what pressure?", status=QueryStatus.ANSWERED,
                         outcome=QueryOutcome(answer=answer, mode="dfs"))
    body = QueryResponse.of(record).model_dump(mode="json")
    assert body["sentences"][0]["verdict"] == "supported"
    assert body["sentences"][0]["window"] == {"doc_id": "d1", "page": 4, "start": 120, "end": 168,
                                              "text": "Each valve opens at 12 bar."}


def test_verify_request_refuses_missing_citations_and_bad_pages() -> None:
    with pytest.raises(pydantic.ValidationError):
        VerifyRequest.model_validate({"answer": "Text.", "citations": []})
    with pytest.raises(pydantic.ValidationError, match="page numbers start at 1"):
        VerifyRequest.model_validate({"answer": "Text.", "citations": [{"doc_id": "d1", "pages": [0]}]})
