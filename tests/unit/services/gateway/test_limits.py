"""Body limits are enforced while the body streams in: a declared size over the limit is refused
before any byte is read, a chunked body as soon as it passes the limit; a JSON body has its own
limit. The gateway runs on fakes of its ports: a body within its limits gets as far as the
store (tests/support/gateway/fake_gateway.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway, served
from tests.support.gateway.streams import send_chunked_upload

UPLOAD_LIMIT = 1024 * 1024
REQUEST_LIMIT = 2 * UPLOAD_LIMIT
JSON_LIMIT = 64 * 1024
# No keys asked (TREERAG_AUTH=off): a body within its limits reaches validation, not a 401.
SETTINGS = Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/", auth="off",
                    max_upload_bytes=UPLOAD_LIMIT, max_request_bytes=REQUEST_LIMIT, max_json_bytes=JSON_LIMIT)


@pytest.fixture(scope="module")
def gateway() -> FakeGateway:
    return FakeGateway(settings=SETTINGS)


@pytest.fixture(scope="module")
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    """The gateway app on fakes, served by uvicorn on a loopback port."""
    with served(FakeGateway(settings=SETTINGS).app()) as port:
        yield port


def test_a_json_body_over_its_limit_is_413_naming_the_setting(client: TestClient) -> None:
    body = b'{"question": "' + b"x" * JSON_LIMIT + b'"}'
    response = client.post("/v1/query", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert "TREERAG_MAX_JSON_BYTES" in response.json()["detail"]
    assert len(response.content) < 1_000
    assert response.headers["x-content-type-options"] == "nosniff"


def test_a_json_body_within_its_limit_reaches_validation(client: TestClient) -> None:
    response = client.post("/v1/query", json={"question": "x" * (JSON_LIMIT // 2)})
    assert response.status_code == 422  # longer than a question may be: validated, not refused by size


def test_a_declared_upload_size_over_the_request_limit_is_413(client: TestClient) -> None:
    data = b"%PDF-1.7\n" + b"0" * (2 * REQUEST_LIMIT)
    response = client.post("/v1/documents", files={"file": ("big.pdf", data, "application/pdf")})
    assert response.status_code == 413
    assert "TREERAG_MAX_REQUEST_BYTES" in response.json()["detail"]


def test_a_file_over_its_limit_within_the_request_limit_is_413(client: TestClient) -> None:
    data = b"%PDF-1.7\n" + b"0" * UPLOAD_LIMIT
    response = client.post("/v1/documents", files={"file": ("big.pdf", data, "application/pdf")})
    assert response.status_code == 413
    assert "TREERAG_MAX_UPLOAD_BYTES" in response.json()["detail"]


def test_a_chunked_upload_is_refused_as_soon_as_it_passes_the_limit(server: int) -> None:
    total = 256 * UPLOAD_LIMIT  # 256 MiB offered
    sent, response = send_chunked_upload(server, total)
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    # What was written before the answer: the limit plus what the sockets' buffers hold.
    assert sent < REQUEST_LIMIT + 32 * UPLOAD_LIMIT, f"{sent} bytes were read before the 413"
