"""Random and hostile query settings through the gateway and the bus: every query ends.

Each query must end `answered` or `failed` before its deadline, and no stage may attempt any
message more than TREERAG_MAX_ATTEMPTS times. Values are drawn from a seeded generator
(TREERAG_PROPERTY_SEED replays a run; the seed is in every failure message): in-range values,
the edges of each range, and what a careless or hostile client sends (2^63, -1, NaN and Infinity
as raw JSON, huge strings, wrong types, unknown names). Through the gateway a bad value must be
refused with a short 422 before anything is published; published straight onto the bus, the
first stage must dead-letter it at once and record the query failed.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import typing
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from shared.model.events import (
    ContextCompressed,
    DeadLetter,
    QueryReceived,
)
from shared.model.query import (
    CompressedContext,
    NavigationSummary,
    QuerySettings,
    TraversalStats,
)
from shared.settings import get_settings
from tests.support.integration.kafka_tools import publish, read_topic
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess, Stack, wait_until
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

SEED = int(os.environ.get("TREERAG_PROPERTY_SEED") or random.randrange(2**32))
GATEWAY_QUERIES = 24
BUS_QUERIES = 8
TIMEOUT_S = 20.0
SMALL_BODY = 2_000
HUGE = '"' + "x" * 50_000 + '"'
QUERY_TOPICS = ("query.received", "nodes.selected", "context.compressed")
RETRY_LOGS = ("handler failed, will retry", "giving up", "handler failed after the deadline; not retried")


def _bounds(name: str) -> tuple[Any, Any]:
    metadata = QuerySettings.model_fields[name].metadata
    ge = next((m.ge for m in metadata if getattr(m, "ge", None) is not None), None)
    le = next((m.le for m in metadata if getattr(m, "le", None) is not None), None)
    return ge, le


def value_for(name: str, rng: random.Random, hostile: bool) -> str:
    """A JSON text for setting `name`: valid when not `hostile`."""
    annotation = QuerySettings.model_fields[name].annotation
    ge, le = _bounds(name)
    if annotation is bool:
        return rng.choice(['"yes"', "2", "null", HUGE]) if hostile else rng.choice(["true", "false"])
    if annotation is int:
        if hostile:
            beyond = [str(le + 1)] if le is not None else []
            return rng.choice([str(2**63), str(2**64), "-1", "0", str(10**12), '"5"', "true", "5.5", "null", "[1]",
                               '{"a": 1}', HUGE, *beyond])
        low, high = ge or 1, le or 20
        return str(rng.choice([low, high, rng.randint(low, min(high, 20))]))
    if annotation is float:
        if hostile:
            return rng.choice(["NaN", "Infinity", "-Infinity", "1e308", "-0.01", "1.01", '"0.5"', "null", HUGE])
        return json.dumps(rng.choice([0.0, 1.0, round(rng.random(), 3)]))
    # a choice among named values (mode, what to do with contradicted sentences, ...)
    choices = typing.get_args(annotation)
    assert choices, f"no value generator for setting {name}: {annotation}"
    return rng.choice(['"depth"', HUGE, "3", "null"]) if hostile else json.dumps(rng.choice(choices))


def settings_case(rng: random.Random) -> tuple[str, bool]:
    """(settings JSON object text, whether it is valid)."""
    names = rng.sample(list(QuerySettings.model_fields), rng.randint(1, 3))
    hostile = {name: rng.random() < 0.5 for name in names}
    parts = [f'"{name}": {value_for(name, rng, hostile[name])}' for name in names]
    unknown = rng.random() < 0.1
    if unknown:
        parts.append(rng.choice(['"top_k": 3', '"' + "k" * 20_000 + '": 1']))
    return "{" + ", ".join(parts) + "}", not (unknown or any(hostile.values()))


def result_row(stack: Stack, query_id: str) -> dict[str, Any] | None:
    client = stack.mongo()
    try:
        row = client[stack.db_name]["query_results"].find_one({"_id": query_id})
    finally:
        client.close()
    return row if row and row.get("status") in ("answered", "failed") else None


async def test_every_query_ends_answered_or_failed_within_its_deadline_with_bounded_attempts(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess]
) -> None:
    rng = random.Random(SEED)
    context = f"(TREERAG_PROPERTY_SEED={SEED})"
    doc_id = upload_ready(gateway, manual_pdf(unit=601), "unit-601.pdf")["doc_id"]
    max_attempts = get_settings().max_attempts

    # ---- through the gateway: 422 before publishing, or an answer or a failure in time
    cases = [settings_case(rng) for _ in range(GATEWAY_QUERIES)]
    cases[0] = ('{"beam_width": 9223372036854775808}', False)  # the reported one, always
    questions = ["At what pressure does the safety valve open?"] * GATEWAY_QUERIES
    questions[1] = "x" * 1_000_000

    bodies = [(f'{{"question": {json.dumps(question)}, "doc_ids": ["{doc_id}"], '
               f'"timeout_s": {TIMEOUT_S}, "settings": {settings}}}').encode()
              for question, (settings, _) in zip(questions, cases, strict=True)]
    async with httpx.AsyncClient(timeout=TIMEOUT_S + 30) as client:
        async def ask(body: bytes) -> httpx.Response:
            return await client.post(f"{gateway.url}/v1/query", content=body,
                                     headers={"content-type": "application/json", **gateway.auth})

        responses = await asyncio.gather(*(ask(body) for body in bodies))

    accepted: list[str] = []
    max_json_bytes = get_settings().max_json_bytes
    for (settings, valid), question, body, response in zip(cases, questions, bodies, responses, strict=True):
        valid = valid and len(question) <= 4000
        what = f"{context} settings {settings[:120]} -> {response.status_code} {response.text[:300]}"
        if len(body) > max_json_bytes:
            # refused by size before it is parsed, let alone published
            assert response.status_code == 413, what
            assert len(response.content) < SMALL_BODY, what
            continue
        if not valid:
            assert response.status_code == 422, what
            assert len(response.content) < SMALL_BODY, what
            continue
        assert response.status_code in (200, 502), what
        body = response.json()
        assert body["status"] in ("answered", "failed"), what
        assert body["timings"]["total_ms"] < TIMEOUT_S * 1000, what
        accepted.append(body["query_id"])
    assert accepted, f"{context} no valid case drawn"

    # ---- straight onto the bus, as any other producer could: no gateway to refuse them
    deadline = datetime.now(UTC) + timedelta(seconds=TIMEOUT_S)
    published: list[str] = []
    for i in range(BUS_QUERIES):
        settings, valid = settings_case(rng) if i else ('{"beam_width": 9223372036854775808}', False)
        query_id = uuid.uuid4().hex
        event = QueryReceived(query_id=query_id, question="At what pressure does the safety valve open?",
                              doc_ids=[doc_id], deadline=deadline, producer="test")
        fields = event.model_dump(mode="json")
        del fields["settings"]
        body = json.dumps(fields)[:-1] + f', "settings": {settings}}}'  # raw: NaN and 2^63 as written
        await publish(stack.kafka_bootstrap, stack.topic(event.TOPIC), body.encode(), query_id)
        published.append(query_id)
    # A valid event carrying a number MongoDB cannot store: the verifier's insert fails, as in
    # the original report, and giving up must not fail the same way.
    overflow_id = uuid.uuid4().hex
    stats = TraversalStats(nodes_visited=2**63)
    compressed = ContextCompressed(
        query_id=overflow_id, question="At what pressure does the safety valve open?", doc_ids=[doc_id],
        deadline=deadline, producer="test",
        navigation=NavigationSummary(mode="dfs", stats=stats),
        context=CompressedContext(question="q", passages=[], tokens_before=0, tokens_after=0),
    )
    await publish(stack.kafka_bootstrap, stack.topic(compressed.TOPIC), compressed.model_dump_json().encode(),
                  overflow_id)
    published.append(overflow_id)

    for query_id in published:
        row = wait_until(lambda q=query_id: result_row(stack, q), TIMEOUT_S + 5,
                         f"query {query_id} to end {context}\n{stack.logs()}", interval_s=0.25)
        finished = row["finished_at"]
        finished = finished if isinstance(finished, datetime) else datetime.fromisoformat(finished)
        assert finished.replace(tzinfo=finished.tzinfo or UTC) <= deadline, f"{context} {query_id} ended late"
    assert result_row(stack, overflow_id)["status"] == "failed"  # type: ignore[index]

    # ---- nothing attempted more than TREERAG_MAX_ATTEMPTS times, nothing still looping
    await asyncio.sleep(3.0)
    ours = set(accepted) | set(published)
    attempts: Counter[tuple[str, str]] = Counter()
    for process in query_stages:
        assert process.alive, f"{process.name} died {context}\n{process.tail()}"
        for record in process.log_records():
            if record.get("query_id") in ours and record.get("msg") in RETRY_LOGS:
                attempts[(process.name, record["query_id"])] += 1
    assert all(n <= max_attempts for n in attempts.values()), f"{context} {attempts.most_common(3)}"

    letters: Counter[tuple[str, str]] = Counter()
    for topic in QUERY_TOPICS:
        for record in await read_topic(stack.kafka_bootstrap, stack.topic(f"{topic}.dlq")):
            letter = DeadLetter.model_validate_json(record.value)
            if letter.key in ours:
                letters[(topic, letter.key)] += 1
                assert letter.attempts <= max_attempts, f"{context} {letter.model_dump_json()[:500]}"
    assert all(n == 1 for n in letters.values()), f"{context} dead-lettered repeatedly: {letters.most_common(3)}"
    assert {key for _, key in letters} >= set(published[:1]) | {overflow_id}

    client = stack.mongo()
    try:
        counts = [row["count"] for row in client[stack.db_name]["delivery_attempts"].find({})]
    finally:
        client.close()
    assert all(count <= max_attempts for count in counts), f"{context} ledger counts {counts}"
