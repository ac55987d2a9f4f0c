"""`POST /v1/verify` refuses a body it cannot check with 422 before reading any page.

The gateway runs on fakes of its ports (tests/support/gateway/fake_gateway.py); `reads` there says
whether a request got as far as the pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shared.model.documents import DocumentRecord, DocumentStatus
from tests.support.gateway.fake_gateway import FakeGateway


@pytest.fixture(scope="module")
def gateway() -> FakeGateway:
    fake = FakeGateway()
    fake.store.documents["plant"] = DocumentRecord(doc_id="plant", file_name="plant.pdf", status=DocumentStatus.READY,
                                                   page_count=1)
    fake.store.pages["plant"] = ["Valves open at 12 bar."]
    return fake


@pytest.fixture(scope="module")
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


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
def test_a_body_that_cannot_be_checked_is_refused(client: TestClient, gateway: FakeGateway,
                                                   body: dict[str, Any]) -> None:
    read_before = gateway.store.reads["get_page_texts"]
    response = client.post("/v1/verify", json=body)
    assert response.status_code == 422, response.text
    assert gateway.store.reads["get_page_texts"] == read_before


def test_a_valid_body_reaches_the_pages(client: TestClient) -> None:
    response = client.post("/v1/verify", json={"answer": "Valves open at 12 bar.",
                                               "citations": [{"doc_id": "plant", "pages": [4, 5]}]})
    assert response.status_code == 404 and "has no page 4" in response.json()["detail"]
