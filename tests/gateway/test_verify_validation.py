"""`POST /v1/verify` refuses a body it cannot check with 422 before reading any page.

As in test_query_validation, the app runs without its lifespan: a body that passes validation
reaches the handler, which answers 503 "starting" because nothing is connected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from services.gateway.app import create_app
from shared.settings import Settings


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = create_app(Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/", auth="off"))
    # A loopback base URL: the gateway answers only the Host names it is configured for.
    yield TestClient(app, base_url="http://127.0.0.1:8000")


BAD_BODIES: list[dict[str, Any]] = [
    {"answer": "Valves open at 12 bar.", "citations": []},
    {"answer": "", "citations": [{"doc_id": "d1", "pages": [1]}]},
    {"answer": "x" * 20_001, "citations": [{"doc_id": "d1", "pages": [1]}]},
    {"answer": "Valves open at 12 bar.", "citations": [{"doc_id": "d1", "pages": [0]}]},
    {"answer": "Valves open at 12 bar.", "citations": [{"doc_id": "d1", "pages": []}]},
    {"answer": "Valves open at 12 bar.", "citations": [{"doc_id": "d1", "pages": list(range(1, 52))}]},
    {"answer": "Valves open at 12 bar.", "citations": [{"doc_id": "", "pages": [1]}]},
    {"answer": "Valves open at 12 bar."},
]


@pytest.mark.parametrize("body", BAD_BODIES, ids=lambda b: str(b)[:50])
def test_a_body_that_cannot_be_checked_is_refused(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/v1/verify", json=body)
    assert response.status_code == 422, response.text


def test_a_valid_body_reaches_the_pages(client: TestClient) -> None:
    response = client.post("/v1/verify", json={"answer": "Valves open at 12 bar.",
                                               "citations": [{"doc_id": "plant.pdf", "pages": [4, 5]}]})
    assert response.status_code == 503  # past validation: it needs the store, not connected here
