"""The OpenAI-compatible endpoint on fakes of the gateway's ports, with the official `openai`
SDK as the client: what it sends reaches the pipeline as one completed question, and what comes
back is an ordinary completion carrying the evidence in `treerag`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from shared.model.events import AnswerVerified, QueryProgress, QueryReceived
from shared.model.query import Citation
from tests.support.gateway.fake_gateway import FakeGateway, served, supported, verified, with_manual

SENTENCES = ["The relief valve opens at 12 bar.", "It is tested every year."]


def answer(event: QueryReceived) -> AnswerVerified:
    citation = Citation(doc_id="manual", file_name="manual.pdf", pages=[2])
    return verified(event, "The relief valve opens at 12 bar [manual.pdf, p. 2]. "
                           "It is tested every year [manual.pdf, p. 2].", supported(SENTENCES, citation), [citation])


@pytest.fixture
def gateway() -> FakeGateway:
    return with_manual(FakeGateway(), answer)


@pytest.fixture
def client(gateway: FakeGateway) -> Iterator[openai.OpenAI]:
    with gateway.client() as http:
        yield openai.OpenAI(base_url=f"{http.base_url}/v1", api_key="unused", http_client=http, max_retries=0)


def test_a_completion_is_the_marked_answer_with_its_evidence(client: openai.OpenAI, gateway: FakeGateway) -> None:
    completion = client.chat.completions.create(model="treerag/manual",
                                                messages=[{"role": "user", "content": "When does the valve open?"}])
    assert completion.choices[0].message.content == answer_text()
    extra: dict[str, Any] = (completion.model_extra or {})["treerag"]
    assert extra["citations"][0]["pages"] == [2] and [s["verdict"] for s in extra["sentences"]] == ["supported"] * 2
    assert gateway.bus.of_type(QueryReceived)[0].doc_ids == ["manual"]


def answer_text() -> str:
    return "The relief valve opens at 12 bar [manual.pdf, p. 2]. It is tested every year [manual.pdf, p. 2]."


def test_a_stream_sends_the_answer_sentence_by_sentence_then_the_evidence(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(model="treerag", stream=True,
                                                 messages=[{"role": "user", "content": "When does it open?"}]))
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces == ["The relief valve opens at 12 bar [manual.pdf, p. 2]. ",
                      "It is tested every year [manual.pdf, p. 2]."]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop" and (chunks[-1].model_extra or {})["treerag"]["citations"]


LINES = ["The relief valve opens at 12 bar [manual.pdf, p. 2].", "It is tested every year [manual.pdf, p. 2]."]


def told(event: QueryReceived, order: tuple[int, ...], lines: list[str] = LINES) -> list[QueryProgress]:
    """The verifier's sentence events for a streamed question, in `order` (the bus keeps none),
    each with its line as the answer shows it."""
    checks = answer(event).outcome.answer.sentences
    return [QueryProgress.of(event, "sentence", index=i, sentence=checks[i], text=lines[i]) for i in order]


def streamed_pieces(client: openai.OpenAI) -> list[str]:
    chunks = client.chat.completions.create(model="treerag", stream=True,
                                            messages=[{"role": "user", "content": "When does it open?"}])
    return [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]


def test_a_streamed_completion_asks_the_stages_for_their_progress(client: openai.OpenAI,
                                                                   gateway: FakeGateway) -> None:
    client.chat.completions.create(model="treerag", messages=[{"role": "user", "content": "When?"}])
    streamed_pieces(client)
    assert [e.progress for e in gateway.bus.of_type(QueryReceived)] == [False, True]


def test_the_verified_sentences_stream_in_the_answers_order_and_make_up_the_answer(
        client: openai.OpenAI, gateway: FakeGateway) -> None:
    gateway.bus.progress = lambda event: told(event, order=(1, 0, 1))
    pieces = streamed_pieces(client)
    assert pieces == [LINES[0], f" {LINES[1]}"]
    assert "".join(pieces) == answer_text()


def test_the_sentences_not_streamed_follow_from_the_answer(client: openai.OpenAI, gateway: FakeGateway) -> None:
    gateway.bus.progress = lambda event: told(event, order=(0,))
    assert "".join(streamed_pieces(client)) == answer_text()


def test_an_answer_that_differs_from_what_was_streamed_follows_whole(client: openai.OpenAI,
                                                                     gateway: FakeGateway) -> None:
    gateway.bus.progress = lambda event: told(event, order=(0,), lines=["The valve never opens [manual.pdf, p. 2]."])
    pieces = streamed_pieces(client)
    assert pieces[0] == "The valve never opens [manual.pdf, p. 2]."
    assert "".join(pieces[1:]) == f"\n\n{answer_text()}"


def test_a_checked_sentence_reaches_the_sdk_before_the_answer_is_complete(gateway: FakeGateway) -> None:
    gateway.bus.progress = lambda event: told(event, order=(0,))
    gateway.bus.answer_after_s = 0.6
    with served(gateway.app()) as port:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        started = time.perf_counter()
        arrived: list[tuple[float, str | None]] = []
        for c in client.chat.completions.create(model="treerag", stream=True,
                                                messages=[{"role": "user", "content": "When does it open?"}]):
            if c.choices and (c.choices[0].delta.content or c.choices[0].finish_reason):
                arrived.append((time.perf_counter() - started, c.choices[0].delta.content))
    first_at, first = arrived[0]
    last_at = arrived[-1][0]
    assert first == LINES[0] and first_at < 0.3, arrived
    assert last_at - first_at >= 0.4, arrived


def test_the_conversation_in_messages_completes_the_last_question(client: openai.OpenAI,
                                                                  gateway: FakeGateway) -> None:
    completion = client.chat.completions.create(model="treerag", messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What was Apple's net income in 2019?"},
        {"role": "assistant", "content": "$55 billion."},
        {"role": "user", "content": [{"type": "text", "text": "And in 2020?"}]},
    ])
    assert gateway.bus.of_type(QueryReceived)[0].question == "What was Apple's net income in 2020?"
    assert (completion.model_extra or {})["treerag"]["question"] == "What was Apple's net income in 2020?"


def test_the_models_are_all_documents_and_each_ready_one(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["treerag", "treerag/manual"]


@pytest.mark.parametrize(("model", "messages", "error"), [
    ("gpt-4o", [{"role": "user", "content": "Hi?"}], openai.NotFoundError),
    ("treerag/nope", [{"role": "user", "content": "Hi?"}], openai.NotFoundError),
    ("treerag", [], openai.UnprocessableEntityError),
    ("treerag", [{"role": "assistant", "content": "Hi"}], openai.UnprocessableEntityError),
    ("treerag", [{"role": "user", "content": "x"}] * 10_000, openai.UnprocessableEntityError),
    ("treerag", [{"role": "wizard", "content": "Hi?"}], openai.UnprocessableEntityError),
    ("treerag", [{"role": "user", "content": 42}], openai.UnprocessableEntityError),
    ("treerag", [{"role": "user", "content": "x" * 5_000}], openai.UnprocessableEntityError),
])
def test_bad_requests_raise_the_sdks_error_and_ask_nothing(client: openai.OpenAI, gateway: FakeGateway, model: str,
                                                          messages: list[Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        client.chat.completions.create(model=model, messages=messages)
    assert not gateway.bus.of_type(QueryReceived)
