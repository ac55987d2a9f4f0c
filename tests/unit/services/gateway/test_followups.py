"""With a model configured, follow-ups are rewritten by it (through the real OpenAI-compatible
client, against a local server speaking the provider's API); when it fails or gives nothing
usable, the rules complete them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.gateway.followups import ModelFollowUps
from shared.adapters.llm.call_cache import CallCache
from shared.adapters.llm.openai_compat import OpenAICompatibleClient
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import AnswerVerified, QueryOutcome, QueryReceived
from shared.model.query import VerifiedAnswer
from tests.support.gateway.fake_gateway import FakeGateway
from tests.support.llm.clients import FAST_RETRY
from tests.support.llm.fake_provider import FakeProvider, Reply

FIRST = "What was Apple's net income in 2019?"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


def gateway_with_model(provider: FakeProvider) -> FakeGateway:
    llm = OpenAICompatibleClient("llama3.1", base_url=provider.openai_base_url, api_key="local-key", timeout_s=5.0,
                                 retry=FAST_RETRY, cache=CallCache())
    fake = FakeGateway(follow_ups=ModelFollowUps(llm, "llm:llama3.1"))
    fake.store.documents["10k"] = DocumentRecord(doc_id="10k", file_name="10k.pdf", status=DocumentStatus.READY)
    fake.answer_with(refusal)  # every question is answered at once: the test is about the wording
    return fake


def refusal(event: QueryReceived) -> AnswerVerified:
    answer = VerifiedAnswer(question=event.question, answer="Not found in the documents.", abstained=True)
    return AnswerVerified(query_id=event.query_id, question=event.question, doc_ids=event.doc_ids,
                          settings=event.settings, tenant=event.tenant, outcome=QueryOutcome(answer=answer, mode="dfs"))


def test_the_model_writes_the_follow_up_out(provider: FakeProvider) -> None:
    provider.script(Reply(text="What was Apple's net income in fiscal 2020?"))
    fake = gateway_with_model(provider)
    with fake.client() as client:
        chat = client.post("/v1/chats", json={}).json()["chat_id"]
        client.post(f"/v1/chats/{chat}/messages", json={"question": FIRST, "timeout_s": 10})
        turn = client.post(f"/v1/chats/{chat}/messages", json={"question": "And the year after?", "timeout_s": 10})
    body = turn.json()
    assert body["standalone"] == "What was Apple's net income in fiscal 2020?"
    assert "llm:llama3.1" in body["rewrite_reason"]
    assert fake.bus.of_type(QueryReceived)[-1].question == "What was Apple's net income in fiscal 2020?"
    [call] = provider.calls_matching("And the year after?")
    assert FIRST in str(call.body)


def test_when_the_model_fails_the_rules_complete_the_follow_up(provider: FakeProvider) -> None:
    provider.script(*[Reply.error(500)] * 5)
    fake = gateway_with_model(provider)
    with fake.client() as client:
        chat = client.post("/v1/chats", json={}).json()["chat_id"]
        client.post(f"/v1/chats/{chat}/messages", json={"question": FIRST, "timeout_s": 10})
        turn = client.post(f"/v1/chats/{chat}/messages", json={"question": "And in 2020?", "timeout_s": 10})
    assert turn.json()["standalone"] == "What was Apple's net income in 2020?"


def test_the_first_question_is_never_sent_to_the_model(provider: FakeProvider) -> None:
    fake = gateway_with_model(provider)
    with fake.client() as client:
        chat = client.post("/v1/chats", json={}).json()["chat_id"]
        client.post(f"/v1/chats/{chat}/messages", json={"question": FIRST, "timeout_s": 10})
    assert provider.calls_matching("Rewrite") == []
