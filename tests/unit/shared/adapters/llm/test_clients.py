"""Both real clients against the local provider server: retries, timeouts, parsing, usage, cache."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import REGISTRY
from pydantic import BaseModel

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.call_cache import CallCache, DirectoryCallStore
from shared.adapters.llm.client import ModelRetryPolicy
from shared.adapters.llm.errors import (
    LLMMalformedOutputError,
    LLMRequestError,
    LLMUnavailableError,
)
from tests.support.llm.clients import FAST_RETRY, make_client
from tests.support.llm.fake_provider import FakeProvider, Reply


class Fact(BaseModel):
    name: str
    year: int


class Facts(BaseModel):
    facts: list[Fact]


VALID = {"facts": [{"name": "pdf", "year": 1993}]}


def test_valid_json_is_parsed_and_usage_recorded(client, provider: FakeProvider) -> None:
    provider.script(Reply.json(VALID))
    result = client.generate_json("list the facts", Facts, purpose="tree")
    assert result == Facts.model_validate(VALID)
    usage = client.usage.by_purpose()["tree"]
    assert usage.calls == 1
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    # Gemini 2.5 Flash is in the price table; a local model costs nothing.
    assert (usage.cost_usd > 0) == (client.provider == "gemini")


def test_malformed_json_is_retried_then_succeeds(client, provider: FakeProvider) -> None:
    provider.script(Reply(text='{"facts": [{"name": "pdf", "year": '), Reply.json(VALID))
    assert client.generate_json("facts please", Facts, purpose="tree").facts[0].year == 1993
    assert len(provider.calls) == 2
    assert client.usage.by_purpose()["tree"].malformed == 1


def test_json_of_the_wrong_shape_counts_as_malformed(client, provider: FakeProvider) -> None:
    provider.script(Reply.json({"facts": [{"name": "pdf"}]}), Reply.json({"unrelated": 1}))
    with pytest.raises(LLMMalformedOutputError, match="Facts"):
        client.generate_json("facts please", Facts, purpose="tree")
    assert len(provider.calls) == FAST_RETRY.malformed_attempts


def test_429_then_success(client, provider: FakeProvider) -> None:
    provider.script(Reply.error(429), Reply.json(VALID))
    assert client.generate_json("q", Facts, purpose="scoring") == Facts.model_validate(VALID)
    assert len(provider.calls) == 2
    assert client.usage.by_purpose()["scoring"].retries == 1


def test_retry_after_header_sets_the_wait(client_kind: str, provider: FakeProvider) -> None:
    waits: list[float] = []
    client = make_client(client_kind, provider, sleep=waits.append,
                         retry=ModelRetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=5.0))
    provider.script(Reply.error(429, retry_after=2), Reply.json(VALID))
    client.generate_json("q", Facts, purpose="scoring")
    assert waits == [2.0]


def test_backoff_grows_with_jitter() -> None:
    policy = ModelRetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 8.0)]:
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1  # jittered, so clients retrying together spread out


def test_server_errors_exhaust_the_retries(client, provider: FakeProvider) -> None:
    provider.script(*[Reply.error(503)] * FAST_RETRY.max_attempts)
    with pytest.raises(LLMUnavailableError, match="failed 3 times"):
        client.generate_json("q", Facts, purpose="answer")
    assert len(provider.calls) == FAST_RETRY.max_attempts


def test_timeout_is_retried(client_kind: str, provider: FakeProvider) -> None:
    client = make_client(client_kind, provider, timeout_s=0.5)
    provider.script(Reply.slow(2.0, Reply.json(VALID)), Reply.json(VALID))
    assert client.generate_json("q", Facts, purpose="answer").facts[0].name == "pdf"
    assert len(provider.calls) == 2


def test_every_attempt_timing_out_raises(client_kind: str, provider: FakeProvider) -> None:
    client = make_client(client_kind, provider, timeout_s=0.3)
    provider.script(*[Reply.slow(1.0)] * FAST_RETRY.max_attempts)
    with pytest.raises(LLMUnavailableError, match="TREERAG_LLM_TIMEOUT_S"):
        client.generate_text("q", purpose="answer")


def test_client_errors_are_not_retried(client, provider: FakeProvider) -> None:
    provider.script(Reply(status=403, raw_body='{"error": {"code": 403, "message": "bad key", "status": "PERMISSION_DENIED"}}'))
    with pytest.raises(LLMRequestError) as caught:
        client.generate_text("q", purpose="answer")
    assert caught.value.status == 403
    assert len(provider.calls) == 1


def test_identical_calls_hit_the_cache(client, provider: FakeProvider) -> None:
    provider.script(Reply.json(VALID), Reply.json(VALID), Reply(text="an answer"))
    first = client.generate_json("same prompt", Facts, purpose="tree")
    second = client.generate_json("same prompt", Facts, purpose="tree")
    assert first == second and len(provider.calls) == 1
    client.generate_text("same prompt", purpose="answer")  # another schema: another key
    assert len(provider.calls) == 2
    assert client.usage.by_purpose()["tree"].cache_hits == 1


def test_failed_replies_are_not_cached(client, provider: FakeProvider) -> None:
    provider.script(Reply(text="nope"), Reply(text="nope"), Reply.json(VALID))
    with pytest.raises(LLMMalformedOutputError):
        client.generate_json("p", Facts, purpose="tree")
    assert client.generate_json("p", Facts, purpose="tree").facts
    assert len(provider.calls) == 3


def test_persistent_call_store_survives_a_new_client(client_kind: str, provider: FakeProvider, tmp_path) -> None:
    store = DirectoryCallStore(EmbeddedRepository(tmp_path / "store"))
    provider.script(Reply.json(VALID))
    make_client(client_kind, provider, cache=CallCache(store=store)).generate_json("p", Facts, purpose="tree")
    fresh = make_client(client_kind, provider, cache=CallCache(store=store))
    assert fresh.generate_json("p", Facts, purpose="tree") == Facts.model_validate(VALID)
    assert len(provider.calls) == 1


def test_concurrency_is_bounded(client_kind: str, provider: FakeProvider) -> None:
    client = make_client(client_kind, provider, max_concurrency=2)
    provider.responder = lambda call: Reply.slow(0.3, Reply(text=f"reply to {call.prompt}"))
    threads = [threading.Thread(target=client.generate_text, args=(f"q{i}",), kwargs={"purpose": "answer"})
               for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(provider.calls) == 6
    assert provider.max_in_flight == 2


def test_llm_call_metrics_are_counted(client, provider: FakeProvider) -> None:
    def value(outcome: str) -> float:
        return REGISTRY.get_sample_value("treerag_llm_calls_total", {"purpose": "judge", "outcome": outcome}) or 0.0

    ok, retried = value("ok"), value("retried")
    tokens = REGISTRY.get_sample_value("treerag_llm_tokens_total", {"direction": "input"}) or 0.0
    provider.script(Reply.error(500), Reply(text="fine"))
    client.generate_text("judge this", purpose="judge")
    assert value("ok") == ok + 1 and value("retried") == retried + 1
    assert (REGISTRY.get_sample_value("treerag_llm_tokens_total", {"direction": "input"}) or 0) > tokens


def test_gemini_request_shape(provider: FakeProvider) -> None:
    client = make_client("gemini", provider)
    provider.script(Reply.json(VALID))
    client.generate_json("facts", Facts, purpose="tree")
    call = provider.calls[0]
    assert call.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert call.headers.get("x-goog-api-key") == "test-key"
    config = call.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert set(config["responseSchema"]["properties"]) == {"facts"}


def test_openai_request_shape_and_prose_wrapped_json(provider: FakeProvider) -> None:
    client = make_client("openai", provider)
    provider.script(Reply(text='Here you go:\n```json\n{"facts": [{"name": "pdf", "year": 1993}]}\n```\nAnything else?'))
    assert client.generate_json("facts", Facts, purpose="tree").facts[0].year == 1993
    call = provider.calls[0]
    assert call.headers.get("Authorization") == "Bearer local-key"
    assert call.body["model"] == "llama3.1"
    assert call.body["response_format"]["type"] == "json_schema"


def test_openai_replies_are_capped_by_purpose_and_by_a_small_models_window(provider: FakeProvider) -> None:
    # A model that keeps writing (a small one repeating itself) stops at the cap instead of
    # filling its window: an answer gets less room than a tree's headings.
    long_window = make_client("openai", provider)
    provider.script(Reply.json(VALID), Reply(text="An answer."))
    long_window.generate_json("headings", Facts, purpose="tree")
    long_window.generate_text("question", purpose="answer")
    assert [c.body["max_tokens"] for c in provider.calls] == [6000, 800]
    provider.reset()
    small = make_client("openai", provider, context_tokens=4096)
    provider.script(Reply.json(VALID), Reply(text="An answer."))
    small.generate_json("headings", Facts, purpose="tree")
    small.generate_text("question", purpose="answer")
    assert [c.body["max_tokens"] for c in provider.calls] == [1024, 800]


def test_openai_steps_down_when_structured_output_is_unsupported(provider: FakeProvider) -> None:
    client = make_client("openai", provider)
    provider.script(
        Reply(status=400, raw_body='{"error": {"message": "response_format json_schema is not supported"}}'),
        Reply.json(VALID),
        Reply.json(VALID),
    )
    client.generate_json("one", Facts, purpose="tree")
    client.generate_json("two", Facts, purpose="tree")
    assert [c.body["response_format"]["type"] for c in provider.calls] == ["json_schema", "json_object", "json_object"]


def test_openai_steps_down_when_the_server_fails_on_the_format_with_500(provider: FakeProvider) -> None:
    # llama.cpp's server answers a json_schema response format with 500 and the validation error.
    client = make_client("openai", provider)
    provider.script(
        Reply(status=500, raw_body='{"error": {"message": "body.response_format.type: Input should be \'text\' '
                                   'or \'json_object\'"}}'),
        Reply.json(VALID),
    )
    client.generate_json("one", Facts, purpose="tree")
    assert [c.body["response_format"]["type"] for c in provider.calls] == ["json_schema", "json_object"]


def test_a_bare_array_fills_a_single_list_field(provider: FakeProvider) -> None:
    client = make_client("openai", provider)
    provider.script(Reply.json(VALID["facts"]))
    assert client.generate_json("facts", Facts, purpose="tree").facts[0].name == "pdf"


ANSWER = "The safety valve opens at 111 bar [unit-606.pdf, p. 2]. The pump is serviced every 500 hours."


def test_a_streamed_text_reply_is_told_as_it_is_written(client, provider: FakeProvider) -> None:
    provider.script(Reply(text=ANSWER, piece_delay_s=0.01))
    drafts: list[str] = []
    assert client.generate_text("answer please", purpose="answer", on_text=drafts.append) == ANSWER
    # A word a chunk: the reply is told many times, each time longer, ending with the whole.
    assert len(drafts) == len(ANSWER.split())
    assert all(later.startswith(earlier) for earlier, later in zip(drafts, drafts[1:], strict=False))
    assert drafts[-1] == ANSWER
    call = provider.calls[0]
    assert call.body.get("stream") is True if client.provider == "openai" else call.path.endswith(
        ":streamGenerateContent")
    assert client.usage.by_purpose()["answer"].output_tokens > 0


def test_a_stream_cut_off_mid_reply_is_asked_again_and_told_from_its_start(client, provider: FakeProvider) -> None:
    provider.script(Reply(text=ANSWER, cut_after=4), Reply(text=ANSWER))
    drafts: list[str] = []
    assert client.generate_text("answer please", purpose="answer", on_text=drafts.append) == ANSWER
    assert len(provider.calls) == 2
    # The cut reply was told up to its fourth word; the retry starts again from the first.
    cut = drafts.index("The safety valve opens ")
    assert drafts[cut + 1] == "The " and drafts[-1] == ANSWER
    assert client.usage.by_purpose()["answer"].retries == 1


def test_a_cached_text_reply_is_told_whole(client, provider: FakeProvider) -> None:
    provider.script(Reply(text=ANSWER))
    client.generate_text("answer please", purpose="answer")
    drafts: list[str] = []
    assert client.generate_text("answer please", purpose="answer", on_text=drafts.append) == ANSWER
    assert drafts == [ANSWER] and len(provider.calls) == 1


def test_a_structured_reply_is_never_streamed(client, provider: FakeProvider) -> None:
    provider.script(Reply.json(VALID))
    client.generate_json("list the facts", Facts, purpose="tree")
    assert "stream" not in provider.calls[0].body and not provider.calls[0].path.endswith(":streamGenerateContent")
