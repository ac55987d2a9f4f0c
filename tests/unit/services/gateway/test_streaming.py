"""`Accept: text/event-stream` on a query and on a chat message: `accepted` first, then one
event per answer sentence, then the whole answer; a failure or a timeout ends with `error`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from shared.model.events import AnswerVerified, QueryProgress, QueryReceived
from shared.model.query import Citation
from tests.support.gateway.fake_gateway import FakeGateway, served, supported, verified, with_manual

SENTENCES = ["The relief valve opens at 12 bar.", "It is tested every year."]
STREAM = {"Accept": "text/event-stream"}


def answer(event: QueryReceived) -> AnswerVerified:
    citation = Citation(doc_id="manual", file_name="manual.pdf", pages=[2])
    return verified(event, " ".join(SENTENCES), supported(SENTENCES, citation), [citation], confidence=0.9)


def events(text: str) -> list[tuple[str, dict[str, Any]]]:
    parsed = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        parsed.append((lines["event"], json.loads(lines["data"])))
    return parsed


@pytest.fixture
def gateway() -> FakeGateway:
    return with_manual(FakeGateway(), answer)


@pytest.fixture
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


def test_a_streamed_query_sends_accepted_each_sentence_then_the_answer(client: TestClient) -> None:
    response = client.post("/v1/query", json={"question": "When does the valve open?"}, headers=STREAM)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    received = events(response.text)
    assert [name for name, _ in received] == ["accepted", "sentence", "sentence", "answer"]
    assert received[0][1]["query_id"] == received[-1][1]["query_id"]
    assert [data["text"] for name, data in received if name == "sentence"] == SENTENCES
    assert received[-1][1]["answer"] == " ".join(SENTENCES)


def test_a_stream_nobody_answers_ends_with_a_timeout_error(client: TestClient, gateway: FakeGateway) -> None:
    gateway.answer_with(lambda _: None)
    response = client.post("/v1/query", json={"question": "When?", "timeout_s": 1.0}, headers=STREAM)
    received = events(response.text)
    assert [name for name, _ in received] == ["accepted", "error"] and received[1][1]["status_code"] == 504


def test_a_streamed_chat_message_shows_the_completed_question_first(client: TestClient) -> None:
    chat_id = client.post("/v1/chats", json={}).json()["chat_id"]
    client.post(f"/v1/chats/{chat_id}/messages", json={"question": "What was Apple's net income in 2019?"})
    response = client.post(f"/v1/chats/{chat_id}/messages", json={"question": "And in 2020?"}, headers=STREAM)
    received = events(response.text)
    assert received[0] == ("accepted", {**received[0][1], "standalone": "What was Apple's net income in 2020?"})
    assert received[-1][0] == "turn" and received[-1][1]["turn"] == 2


def progress_of(event: QueryReceived, order: tuple[int, ...] = (0, 1)) -> list[QueryProgress]:
    """What the stages publish for a streamed query: the navigator's route, then the verifier's
    sentences (in `order`: progress events are not ordered on the bus)."""
    checks = answer(event).outcome.answer.sentences
    routed = QueryProgress.of(event.model_copy(update={"documents": [("manual", 1)]}), "routed",
                              pages=[("manual", 2), ("manual", 1)])
    return [routed] + [QueryProgress.of(event, "sentence", index=i, sentence=checks[i]) for i in order]


def test_a_streamed_query_asks_the_stages_for_progress_and_a_plain_one_does_not(
        client: TestClient, gateway: FakeGateway) -> None:
    client.post("/v1/query", json={"question": "When does the valve open?"})
    client.post("/v1/query", json={"question": "When does the valve open?"}, headers=STREAM)
    published = gateway.bus.of_type(QueryReceived)
    assert [e.progress for e in published] == [False, True]


def test_the_stages_progress_is_streamed_each_sentence_once_in_the_answers_order(
        client: TestClient, gateway: FakeGateway) -> None:
    gateway.bus.progress = lambda event: progress_of(event, order=(1, 0, 1))
    response = client.post("/v1/query", json={"question": "When does the valve open?"}, headers=STREAM)
    received = events(response.text)
    assert [name for name, _ in received] == ["accepted", "routed", "sentence", "sentence", "answer"]
    assert received[1][1] == {"documents": ["manual"],
                              "pages": [{"doc_id": "manual", "page": 2}, {"doc_id": "manual", "page": 1}]}
    assert [(data["index"], data["text"]) for name, data in received if name == "sentence"] == list(enumerate(SENTENCES))


def test_a_sentence_the_verifier_has_checked_reaches_the_client_before_the_answer(gateway: FakeGateway) -> None:
    gateway.bus.progress = lambda event: progress_of(event, order=(0,))
    gateway.bus.answer_after_s = 0.6
    with served(gateway.app()) as port:
        started = time.perf_counter()
        seen: dict[str, float] = {}
        with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/query", json={"question": "When does the valve open?"},
                          headers=STREAM, timeout=10) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    seen.setdefault(line.removeprefix("event: "), time.perf_counter() - started)
    assert seen["answer"] - seen["sentence"] >= 0.4, seen
    assert seen["sentence"] < 0.3, seen


def test_a_models_draft_is_relayed_as_it_grows_and_the_answer_still_follows(
        client: TestClient, gateway: FakeGateway) -> None:
    def drafted(event: QueryReceived) -> list[QueryProgress]:
        routed, *sentences = progress_of(event, order=(0, 1))
        return [routed,
                QueryProgress.of(event, "draft", index=0, text="The relief valve opens"),
                QueryProgress.of(event, "draft", index=22, text=" at 12 bar. It is"),
                sentences[0],
                QueryProgress.of(event, "draft", index=0, text="The relief valve opens at 12 bar. It is tested"),
                sentences[1]]

    gateway.bus.progress = drafted
    received = events(client.post("/v1/query", json={"question": "When does the valve open?"}, headers=STREAM).text)
    assert [name for name, _ in received] == ["accepted", "routed", "draft", "draft", "sentence", "draft", "sentence",
                                              "answer"]
    draft = ""
    for name, data in received:
        if name == "draft":  # what a client does with each: keep `offset` characters, add `text`
            draft = draft[: data["offset"]] + data["text"]
    assert draft == "The relief valve opens at 12 bar. It is tested"
    assert received[-1][1]["answer"] == " ".join(SENTENCES)


def test_a_chat_turn_whose_client_leaves_mid_stream_is_still_kept(gateway: FakeGateway) -> None:
    gateway.bus.answer_after_s = 0.5
    with served(gateway.app()) as port:
        base = f"http://127.0.0.1:{port}"
        chat_id = httpx.post(f"{base}/v1/chats", json={}, timeout=10).json()["chat_id"]
        with httpx.stream("POST", f"{base}/v1/chats/{chat_id}/messages", json={"question": "When does the valve open?"},
                          headers=STREAM, timeout=10) as response:
            for line in response.iter_lines():
                if line == "event: accepted":
                    break  # the reader closes the tab before the answer comes
        deadline = time.monotonic() + 5
        turns: list[Any] = []
        while time.monotonic() < deadline and not turns:
            time.sleep(0.1)
            turns = httpx.get(f"{base}/v1/chats/{chat_id}/messages", timeout=10).json()
        assert [(t["turn"], t["status"], t["answer"]) for t in turns] == [(1, "answered", " ".join(SENTENCES))]
