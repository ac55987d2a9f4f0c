"""Conversations over the HTTP API, on fakes of the gateway's ports: a follow-up is asked as a
completed question, shown to the user; threads are the tenant's; bad input gets a clear error."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from shared.model.chats import CHAT_TURNS_MAX
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import AnswerVerified, QueryOutcome, QueryReceived
from shared.model.query import Citation, VerifiedAnswer
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway


def answer_citing(doc_id: str):  # type: ignore[no-untyped-def]
    def answer(event: QueryReceived) -> AnswerVerified:
        verified = VerifiedAnswer(question=event.question, answer="Capital expenditures were $1,577 million.",
                                  confidence=0.7, citations=[Citation(doc_id=doc_id, file_name="3M_2018_10K.pdf",
                                                                      pages=[60])])
        return AnswerVerified(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                              settings=event.settings, tenant=event.tenant,
                              outcome=QueryOutcome(answer=verified, mode="dfs"))
    return answer


@pytest.fixture
def gateway() -> FakeGateway:
    fake = FakeGateway()
    for doc_id in ("3m-2018", "nike-2019"):
        fake.store.documents[doc_id] = DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf",
                                                      status=DocumentStatus.READY)
    fake.answer_with(answer_citing("3m-2018"))
    return fake


@pytest.fixture
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


def test_a_follow_up_is_asked_completed_and_the_completed_question_is_shown(client: TestClient,
                                                                           gateway: FakeGateway) -> None:
    chat = client.post("/v1/chats", json={"title": "3M capex"})
    assert chat.status_code == 201
    chat_id = chat.json()["chat_id"]
    first = client.post(f"/v1/chats/{chat_id}/messages",
                        json={"question": "What is the FY2018 capital expenditure amount for 3M?", "timeout_s": 5})
    assert first.status_code == 200, first.text
    assert first.json()["rewrite_reason"] == "" and first.json()["citations"][0]["pages"] == [60]
    second = client.post(f"/v1/chats/{chat_id}/messages", json={"question": "And in 2017?", "timeout_s": 5}).json()
    assert second["standalone"] == "What is the FY2017 capital expenditure amount for 3M?"
    assert second["question"] == "And in 2017?" and second["rewrite_reason"]
    asked = [e.question for e in gateway.bus.of_type(QueryReceived)]
    assert asked == ["What is the FY2018 capital expenditure amount for 3M?",
                     "What is the FY2017 capital expenditure amount for 3M?"]
    turns = client.get(f"/v1/chats/{chat_id}/messages").json()
    assert [t["turn"] for t in turns] == [1, 2] and turns[1]["answer"].startswith("Capital expenditures")
    assert client.get(f"/v1/chats/{chat_id}").json()["turns"] == 2


def test_a_follow_up_on_the_same_subject_stays_with_the_documents_the_answer_came_from(
        client: TestClient, gateway: FakeGateway) -> None:
    chat_id = client.post("/v1/chats", json={}).json()["chat_id"]
    client.post(f"/v1/chats/{chat_id}/messages", json={"question": "What is the FY2018 capital expenditure for 3M?"})
    client.post(f"/v1/chats/{chat_id}/messages", json={"question": "What is its revenue?"})
    client.post(f"/v1/chats/{chat_id}/messages", json={"question": "What about Nike?"})
    scopes = [e.doc_ids for e in gateway.bus.of_type(QueryReceived)]
    assert scopes == [[], ["3m-2018"], []]


def test_a_chat_over_named_documents_asks_only_them(client: TestClient, gateway: FakeGateway) -> None:
    chat_id = client.post("/v1/chats", json={"doc_ids": ["nike-2019"]}).json()["chat_id"]
    client.post(f"/v1/chats/{chat_id}/messages", json={"question": "What was the revenue?"})
    assert gateway.bus.of_type(QueryReceived)[0].doc_ids == ["nike-2019"]


@pytest.mark.parametrize(("method", "path", "body"), [
    ("get", "/v1/chats/nope", None),
    ("get", "/v1/chats/nope/messages", None),
    ("post", "/v1/chats/nope/messages", {"question": "And in 2017?"}),
    ("delete", "/v1/chats/nope", None),
])
def test_an_unknown_chat_is_404_saying_where_the_chats_are(client: TestClient, method: str, path: str,
                                                          body: dict[str, str] | None) -> None:
    response = client.request(method, path, json=body)
    assert response.status_code == 404 and "GET /v1/chats" in response.json()["detail"]


def test_another_tenants_chat_is_not_found_and_not_listed(gateway: FakeGateway) -> None:
    with gateway.client() as client:
        chat_id = client.post("/v1/chats", json={}).json()["chat_id"]
    other = FakeGateway(settings=Settings(auth="off", tenant="team-b", kafka_bootstrap="127.0.0.1:1",
                                          mongo_url="mongodb://127.0.0.1:1/"), chats=gateway.chats)
    with other.client() as client:
        assert client.get(f"/v1/chats/{chat_id}").status_code == 404
        assert client.post(f"/v1/chats/{chat_id}/messages", json={"question": "Hi?"}).status_code == 404
        assert client.delete(f"/v1/chats/{chat_id}").status_code == 404
        assert client.get("/v1/chats").json() == []
    assert chat_id in gateway.chats.threads


@pytest.mark.parametrize("body", [{}, {"question": ""}, {"question": "x" * 5000}, {"question": 3},
                                  {"question": "ok?", "timeout_s": -1}, {"question": "ok?", "extra": 1}])
def test_a_malformed_message_is_422_and_nothing_is_asked(client: TestClient, gateway: FakeGateway,
                                                         body: dict[str, object]) -> None:
    chat_id = client.post("/v1/chats", json={}).json()["chat_id"]
    assert client.post(f"/v1/chats/{chat_id}/messages", json=body).status_code == 422
    assert not gateway.bus.of_type(QueryReceived) and client.get(f"/v1/chats/{chat_id}/messages").json() == []


def test_a_chat_over_an_unknown_document_is_404(client: TestClient) -> None:
    assert client.post("/v1/chats", json={"doc_ids": ["nope"]}).status_code == 404


def test_a_full_chat_says_to_start_a_new_one(client: TestClient, gateway: FakeGateway) -> None:
    chat_id = client.post("/v1/chats", json={}).json()["chat_id"]
    thread = gateway.chats.threads[chat_id]
    gateway.chats.threads[chat_id] = thread.model_copy(update={"turns": CHAT_TURNS_MAX})
    response = client.post(f"/v1/chats/{chat_id}/messages", json={"question": "And in 2017?"})
    assert response.status_code == 409 and "start a new chat" in response.json()["detail"]


def test_deleting_a_chat_removes_its_turns(client: TestClient, gateway: FakeGateway) -> None:
    chat_id = client.post("/v1/chats", json={}).json()["chat_id"]
    client.post(f"/v1/chats/{chat_id}/messages", json={"question": "What was 3M's capex in 2018?"})
    assert client.delete(f"/v1/chats/{chat_id}").status_code == 204
    assert client.get(f"/v1/chats/{chat_id}").status_code == 404 and chat_id not in gateway.chats.turns_of


def test_deleting_a_document_removes_the_chats_that_cite_it(client: TestClient, gateway: FakeGateway) -> None:
    citing = client.post("/v1/chats", json={}).json()["chat_id"]
    client.post(f"/v1/chats/{citing}/messages", json={"question": "What was 3M's capex in 2018?"})
    over_nike = client.post("/v1/chats", json={"doc_ids": ["nike-2019"]}).json()["chat_id"]
    assert client.delete("/v1/documents/3m-2018").status_code == 200
    deadline = time.monotonic() + 5
    while citing in gateway.chats.threads and time.monotonic() < deadline:
        time.sleep(0.02)
    assert citing not in gateway.chats.threads
    assert over_nike in gateway.chats.threads
