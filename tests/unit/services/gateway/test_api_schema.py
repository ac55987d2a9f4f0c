"""The OpenAPI schema a client generator reads, and the one error shape every refusal answers in.

Built from the app itself (`app.openapi()`), no backend: every operation has a readable, unique
id; every error status an operation declares is an `ErrorBody`, and the statuses its code paths
can give are declared; the tree has its model. Then the refusals themselves, each answered as the
schema says."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.dependencies.utils import get_flat_params
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from fastapi.testclient import TestClient

from services.gateway.app import create_app, declared_endpoints
from services.gateway.auth import PUBLIC_ROUTES
from services.gateway.errors import CODES, ErrorBody
from shared.app.api_keys import issue_key
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway

SETTINGS = Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/")
APP = create_app(SETTINGS)
SCHEMA = APP.openapi()
OPERATIONS = [(method.upper(), path, operation) for path, item in SCHEMA["paths"].items()
              for method, operation in item.items()]
ERROR_REF = "#/components/schemas/ErrorBody"
# The error statuses; a query's 502 and 504 (and a chat turn's) are its response, not an error.
ERROR_STATUSES = {"400", "401", "403", "404", "409", "413", "415", "422", "429", "503"}


def schema_ref(response: dict[str, Any]) -> str | None:
    return response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref")


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def test_every_operation_has_a_readable_unique_id() -> None:
    ids = [operation["operationId"] for _, _, operation in OPERATIONS]
    assert len(OPERATIONS) >= 20
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", op_id) for op_id in ids), ids
    assert len(set(ids)) == len(ids)
    assert {"upload_document", "list_documents", "get_document", "get_tree", "delete_document", "ask",
            "get_query", "create_chat_completion"} <= set(ids)


@pytest.mark.parametrize(("method", "path"), [(m, p) for m, p, _ in OPERATIONS])
def test_every_error_status_an_operation_declares_is_the_one_error_body(method: str, path: str) -> None:
    responses = SCHEMA["paths"][path][method.lower()]["responses"]
    errors = {status: response for status, response in responses.items() if status in ERROR_STATUSES}
    assert "503" in errors, "any operation may meet an outage"
    assert all(schema_ref(response) == ERROR_REF for response in errors.values()), errors
    if path not in PUBLIC_ROUTES:
        assert {"401", "429"} <= set(errors)
    if re.search(r"\{(doc_id|chat_id|query_id)\}", path):
        assert "404" in errors


ROUTES = [route for route in iter_route_contexts(APP.routes)
          if isinstance(route.original_route, APIRoute) and route.include_in_schema]


def validation_can_fail(route: RouteContext) -> bool:
    """A body, or a parameter that is more than a plain string."""
    return route.body_field is not None or any(
        param.field_info.annotation not in (str, str | None) or param.field_info.metadata
        for param in get_flat_params(route.dependant))


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.name)
def test_an_operation_declares_422_exactly_when_its_request_can_fail_validation(route: RouteContext) -> None:
    for method in (route.methods or set()) - {"HEAD"}:
        declared = SCHEMA["paths"][route.path][method.lower()]["responses"]
        assert ("422" in declared) == validation_can_fail(route), (method, route.path)


def test_the_schema_names_no_validation_error_of_fastapis_own_and_no_missing_component() -> None:
    components = SCHEMA["components"]["schemas"]
    assert "HTTPValidationError" not in components
    assert all(ref.removeprefix("#/components/schemas/") in components for ref in refs(SCHEMA))


def test_the_tree_route_answers_the_tree_model() -> None:
    responses = SCHEMA["paths"]["/v1/documents/{doc_id}/tree"]["get"]["responses"]
    assert schema_ref(responses["200"]) == "#/components/schemas/TreeOut"
    tree = SCHEMA["components"]["schemas"]["TreeOut"]
    assert tree["properties"]["nodes"]["items"]["$ref"] == "#/components/schemas/TreeNode"
    assert set(tree["required"]) >= {"doc_id", "file_name", "nodes"}


def test_every_operation_and_each_status_it_declares_has_its_latency_series_before_traffic() -> None:
    endpoints = set(declared_endpoints(APP))
    assert {(method, path) for method, path, _ in endpoints} >= {(method, path) for method, path, _ in OPERATIONS}
    assert {("GET", "/v1/documents/{doc_id}/tree", 409), ("POST", "/v1/query", 503)} <= endpoints


# The refusals, each through the app on fakes.

def error_of(response: Any, status: int, code: str | None = None) -> ErrorBody:
    assert response.status_code == status, response.text
    body = ErrorBody.model_validate(response.json())
    assert body.error.code == (code or CODES[status]) and body.error.message
    assert body.error.type == ("authentication_error" if status == 401 else
                               "server_error" if status >= 500 else "invalid_request_error")
    if isinstance(body.detail, str):
        assert body.detail == body.error.message
    return body


@pytest.fixture
def gateway() -> FakeGateway:
    fake = FakeGateway(settings=SETTINGS.model_copy(update={"auth": "off", "max_json_bytes": 4096}))
    fake.store.documents["manual"] = DocumentRecord(doc_id="manual", file_name="manual.pdf", page_count=2,
                                                    status=DocumentStatus.READY, tenant=fake.settings.tenant)
    return fake


@pytest.fixture
def client(gateway: FakeGateway) -> Iterator[TestClient]:
    with gateway.client() as client:
        yield client


def test_each_refusal_is_an_error_body(client: TestClient, gateway: FakeGateway) -> None:
    error_of(client.get("/v1/documents?cursor=nope"), 400)
    error_of(client.get("/v1/documents/nope"), 404)
    error_of(client.get("/v1/no-such-route"), 404)
    error_of(client.get("/v1/documents/manual/tree"), 409)
    too_large = client.post("/v1/query", content=b'{"question": "' + b"x" * 5000 + b'"}',
                            headers={"content-type": "application/json"})
    assert "TREERAG_MAX_JSON_BYTES" in error_of(too_large, 413).detail
    error_of(client.post("/v1/documents", files={"file": ("x.bin", b"\x00\x01\x02" * 100, "application/octet-stream")}),
             415)
    invalid = error_of(client.post("/v1/query", json={"question": ""}), 422)
    assert isinstance(invalid.detail, list) and invalid.detail[0].loc == ["body", "question"]
    assert invalid.error.param == "question" and "body.question" in invalid.error.message
    gateway.heartbeats.alive = ()
    down = error_of(client.post("/v1/query", json={"question": "When does it open?"}), 503)
    assert down.unavailable and down.unavailable.startswith("stage") and down.query_id
    error_of(client.get("/healthz", headers={"Host": "evil.example"}), 400)


def test_the_openai_routes_answer_the_same_body_which_is_openais_shape(client: TestClient) -> None:
    body = error_of(client.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Hi?"}]}), 404)
    assert "GET /v1/models" in body.error.message and body.error.param is None
    error_of(client.post("/v1/chat/completions", json={"model": "treerag", "messages": [
        {"role": "assistant", "content": "Hi"}]}), 422)


def test_key_admin_and_budget_refusals_are_error_bodies() -> None:
    fake = FakeGateway(settings=SETTINGS.model_copy(update={"rate_limit_per_s": 0.01, "rate_limit_burst": 2}))
    key = asyncio.run(issue_key(fake.keys, fake.settings.tenant)).key
    with fake.client() as client:
        missing = client.get("/v1/documents")
        assert error_of(missing, 401).error.message.startswith("an API key is required")
        assert missing.headers["WWW-Authenticate"].startswith("Bearer")
        error_of(client.get("/metrics", headers={"Authorization": f"Bearer {key}"}), 403)
        client.get("/v1/documents", headers={"Authorization": f"Bearer {key}"})
        limited = client.get("/v1/documents", headers={"Authorization": f"Bearer {key}"})
        assert error_of(limited, 429) and int(limited.headers["Retry-After"]) >= 1


def test_readyz_not_ready_is_an_error_body_beside_its_report(client: TestClient, gateway: FakeGateway) -> None:
    gateway.heartbeats.alive = ("navigator", "compressor", "verifier")
    response = client.get("/readyz")
    error_of(response, 503, "not_ready")
    body = response.json()
    assert body["ready"] is False and body["missing"] == ["stage indexer"] and body["unavailable"] == "stage indexer"
    assert body["checks"] == {"mongodb": "ok", "kafka": "ok"}
