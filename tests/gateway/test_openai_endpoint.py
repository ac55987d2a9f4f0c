"""The OpenAI-compatible endpoint on fakes of the gateway's ports, with the official `openai`
SDK as the client: what it sends reaches the pipeline as one completed question, and what comes
back is an ordinary completion carrying the evidence in `treerag`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from shared.model.events import AnswerVerified, QueryReceived
from shared.model.query import Citation
from tests.gateway.fake_gateway import FakeGateway, supported, verified, with_manual

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
