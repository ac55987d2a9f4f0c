"""The OpenAI-compatible endpoint with the official `openai` SDK as the client, against the
stack (gateway, Kafka, the query stages, FerretDB): a question, a streamed question and a
follow-up carried in `messages`, each with the citations and verdicts `POST /v1/query` gives."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

QUESTION = "At what pressure does the safety valve of unit 404 open?"


@pytest.fixture(scope="module")
def document(gateway: Gateway, indexer_for_module: ServiceProcess) -> dict[str, Any]:
    return upload_ready(gateway, manual_pdf(unit=404), "unit-404.pdf")


@pytest.fixture(scope="module")
def client(gateway: Gateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=gateway.key or "unused", timeout=120, max_retries=0)


def query(gateway: Gateway, question: str, doc_id: str) -> dict[str, Any]:
    response = gateway.post("/v1/query", json={"question": question, "doc_ids": [doc_id]}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_models_name_all_documents_and_each_ready_one(client: openai.OpenAI, document: dict[str, Any]) -> None:
    names = [model.id for model in client.models.list()]
    assert names[0] == "treerag" and f"treerag/{document['doc_id']}" in names


def test_a_question_gets_the_answer_citations_and_verdicts_of_the_query_api(
        client: openai.OpenAI, gateway: Gateway, document: dict[str, Any]) -> None:
    completion = client.chat.completions.create(model=f"treerag/{document['doc_id']}",
                                                messages=[{"role": "user", "content": QUESTION}])
    expected = query(gateway, QUESTION, document["doc_id"])
    content = completion.choices[0].message.content or ""
    assert content == expected["answer"] and "[unit-404.pdf, p. 2]" in content
    extra = (completion.model_extra or {})["treerag"]
    assert extra["citations"] == expected["citations"]
    assert [s["verdict"] for s in extra["sentences"]] == [s["verdict"] for s in expected["sentences"]]
    assert [s["window"] for s in extra["sentences"]] == [s["window"] for s in expected["sentences"]]


def test_a_streamed_question_arrives_in_pieces_that_make_the_same_answer(
        client: openai.OpenAI, gateway: Gateway, document: dict[str, Any]) -> None:
    stream = client.chat.completions.create(model=f"treerag/{document['doc_id']}", stream=True,
                                            messages=[{"role": "user", "content": QUESTION}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == query(gateway, QUESTION, document["doc_id"])["answer"]
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert (chunks[-1].model_extra or {})["treerag"]["citations"][0]["pages"] == [2]


def test_a_follow_up_in_messages_is_asked_completed(client: openai.OpenAI, gateway: Gateway,
                                                    document: dict[str, Any]) -> None:
    messages: list[Any] = [
        {"role": "system", "content": "Answer from the documents."},
        {"role": "user", "content": "What is the maintenance interval of the pump of unit 404?"},
        {"role": "assistant", "content": "Every 500 hours."},
        {"role": "user", "content": "And the safety valve?"},
    ]
    completion = client.chat.completions.create(model="treerag", messages=messages)
    extra = (completion.model_extra or {})["treerag"]
    assert extra["question"] != "And the safety valve?" and "safety valve" in extra["question"]
    assert extra["rewrite_reason"]
    assert extra["citations"], completion


def test_a_bad_request_is_an_error_the_sdk_raises_with_its_reason(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="GET /v1/models"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="treerag", messages=[{"role": "assistant", "content": "Hi"}])
    with pytest.raises(openai.UnprocessableEntityError):
        client.chat.completions.create(model="treerag", messages=[{"role": "user", "content": "x"}] * 10_000)
