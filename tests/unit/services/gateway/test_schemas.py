"""A query's HTTP response carries each answer sentence's verdict and evidence offsets."""

from __future__ import annotations

import pydantic
import pytest

from services.gateway.schemas import QueryResponse, VerifyRequest
from shared.model.events import QueryOutcome
from shared.model.query import (
    PATH_MAX_ENTRIES,
    EvidenceWindow,
    NavigationResult,
    SentenceCheck,
    TraversalStats,
    VerifiedAnswer,
    VisitedSection,
)
from shared.model.query_records import QueryRecord, QueryStatus


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


def _visited(node_id: str, selected: bool) -> VisitedSection:
    return VisitedSection(doc_id="d1", file_name="plant.pdf", node_id=node_id, title=f"Section {node_id}",
                          page_start=4, page_end=6, selected=selected)


def test_query_response_carries_the_navigation_path_in_order() -> None:
    path = [_visited("0004", False), _visited("0005", True), _visited("0006", False)]
    answer = VerifiedAnswer(question="Who tests valves?", answer="The supervisor.", confidence=0.9)
    record = QueryRecord(query_id="q2", question="Who tests valves?", status=QueryStatus.ANSWERED,
                         outcome=QueryOutcome(answer=answer, mode="dfs", path=path))
    body = QueryResponse.of(record).model_dump(mode="json")
    assert [(step["node_id"], step["selected"]) for step in body["path"]] == [
        ("0004", False), ("0005", True), ("0006", False)
    ]
    assert body["path"][1] == {"doc_id": "d1", "file_name": "plant.pdf", "node_id": "0005", "title": "Section 0005",
                               "page_start": 4, "page_end": 6, "selected": True, "via": "walk"}


def test_the_navigation_path_is_bounded_where_it_travels() -> None:
    too_long = [_visited(str(n), False) for n in range(PATH_MAX_ENTRIES + 1)]
    with pytest.raises(pydantic.ValidationError):
        NavigationResult(question="q", mode="dfs", passages=[], stats=TraversalStats(), path=too_long)
    answer = VerifiedAnswer(question="q", answer="")
    with pytest.raises(pydantic.ValidationError):
        QueryOutcome(answer=answer, mode="dfs", path=too_long)
    with pytest.raises(pydantic.ValidationError):
        VisitedSection(doc_id="d1", node_id="n", title="x" * 10_000, page_start=1, page_end=1, selected=False)


def test_verify_request_refuses_missing_citations_and_bad_pages() -> None:
    with pytest.raises(pydantic.ValidationError):
        VerifyRequest.model_validate({"answer": "Text.", "citations": []})
    with pytest.raises(pydantic.ValidationError, match="page numbers start at 1"):
        VerifyRequest.model_validate({"answer": "Text.", "citations": [{"doc_id": "d1", "pages": [0]}]})
