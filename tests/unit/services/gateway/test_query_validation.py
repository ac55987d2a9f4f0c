"""The gateway refuses a query it cannot carry through every stage with 422, before anything is
stored or published, and never sends a large input back.

The gateway runs on fakes of its ports (tests/support/gateway/fake_gateway.py): what it publishes and
stores is there to inspect.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import QueryReceived
from tests.support.gateway.fake_gateway import FakeGateway

SMALL_BODY = 2_000


@pytest.fixture(scope="module")
def gateway() -> FakeGateway:
    fake = FakeGateway()
    fake.store.documents["plant"] = DocumentRecord(doc_id="plant", file_name="plant.pdf", status=DocumentStatus.READY)
    return fake


@pytest.fixture(scope="module")
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


@pytest.fixture(autouse=True)
def nothing_published_before(gateway: FakeGateway) -> None:
    gateway.bus.events.clear()


def post_raw(client: TestClient, body: str) -> Any:
    return client.post("/v1/query", content=body.encode(), headers={"content-type": "application/json"})


HOSTILE_SETTINGS = [
    '{"beam_width": 9223372036854775808}',
    '{"beam_width": 18446744073709551616}',
    '{"token_budget": -1}',
    '{"max_depth": 0}',
    '{"top_k": 3}',
    '{"semantic_weight": NaN}',
    '{"structural_weight": Infinity}',
    '{"contextual_weight": -Infinity}',
    '{"score_threshold": 1e308}',
    '{"beam_width": "5"}',
    '{"beam_width": true}',
    '{"beam_width": [5]}',
    '{"llm_scoring": "yes"}',
    '{"mode": "' + "x" * 100_000 + '"}',
    '{"' + "k" * 100_000 + '": 1}',
    '"not an object"',
]


@pytest.mark.parametrize("settings", HOSTILE_SETTINGS, ids=lambda s: s[:40])
def test_hostile_settings_are_refused_before_anything_is_published(client: TestClient, gateway: FakeGateway,
                                                                   settings: str) -> None:
    response = post_raw(client, f'{{"question": "What is the pressure?", "settings": {settings}}}')
    assert response.status_code == 422, response.text
    assert len(response.content) < SMALL_BODY
    assert not gateway.bus.events and not gateway.queries.pending
    detail = response.json()["detail"]
    assert detail and all(set(error) == {"loc", "msg", "type"} for error in detail)
    assert detail[0]["loc"][:2] == ["body", "settings"]


@pytest.mark.parametrize("body", [
    {"question": "x" * 1_000_000},
    {"question": ""},
    {"question": "why?", "doc_ids": ["d" * 100_000]},
    {"question": "why?", "doc_ids": ["d"] * 10_000},
    {"question": "why?", "timeout_s": 1e308},
], ids=["1MB-question", "empty-question", "huge-doc-id", "10k-doc-ids", "huge-timeout"])
def test_oversized_requests_get_a_short_422(client: TestClient, body: dict[str, Any]) -> None:
    response = post_raw(client, json.dumps(body))
    assert response.status_code == 422
    assert len(response.content) < SMALL_BODY, f"{len(response.content)} bytes echoed"


def test_nan_timeout_and_malformed_json_are_422(client: TestClient) -> None:
    assert post_raw(client, '{"question": "why?", "timeout_s": NaN}').status_code == 422
    malformed = post_raw(client, '{"question": "' + "x" * 100_000)
    assert malformed.status_code == 422 and len(malformed.content) < SMALL_BODY


def test_settings_at_their_bounds_reach_the_stages(client: TestClient, gateway: FakeGateway) -> None:
    settings = {"beam_width": 100, "token_budget": 200_000, "max_depth": 50, "semantic_weight": 1,
                "structural_weight": 0.0, "contextual_weight": 0.5, "llm_scoring": False}
    response = client.post("/v1/query", json={"question": "x" * 4000, "mode": "beam", "settings": settings,
                                              "async": True})
    assert response.status_code == 202, response.text
    [published] = gateway.bus.of_type(QueryReceived)
    assert published.settings.beam_width == 100 and published.settings.mode == "beam"
    assert published.query_id == response.json()["query_id"]


def test_the_schema_publishes_the_bounds(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()["components"]["schemas"]["QuerySettings"]["properties"]
    assert schema["beam_width"]["maximum"] == 100 and schema["beam_width"]["minimum"] == 1
    assert schema["semantic_weight"]["maximum"] == 1.0

