"""Tenants on the real stack: two tenants, each with its own key, upload the same PDF and ask the
same question. Neither reaches the other's documents, pages, PDFs, queries or cached answers
through any route: another tenant's id is 404, as an id that does not exist."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from services.gateway.app import create_app
from services.gateway.auth import PUBLIC_ROUTES
from shared.settings import Settings
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import REPO, Gateway, Stack, wait_until
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration

UNIT = 731
QUESTION = f"At what pressure does the safety valve of unit {UNIT} open?"
FACT = f"{10 + UNIT} bar"
# The gateway's API routes, from its OpenAPI schema (included routers too): each needs a probe
# below, so a new route without a tenant check fails this module.
ROUTES = sorted((method.upper(), path) for path, item in create_app(
    Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/")).openapi()["paths"].items()
    for method in item)


@dataclass
class Tenants:
    acme: Gateway
    globex: Gateway
    acme_doc: str
    globex_doc: str
    acme_query: dict[str, Any]
    globex_query: dict[str, Any]
    acme_key_id: str
    acme_chat: str
    globex_admin: Gateway  # manages globex's keys


def ask(gateway: Gateway, **body: Any) -> httpx.Response:
    return gateway.post("/v1/query", json={"question": QUESTION, **body}, timeout=120)


def stages_of(answer: dict[str, Any]) -> list[str]:
    return [t["stage"] for t in answer["timings"]["stages"]]


@pytest.fixture(scope="module")
def tenants(stack: Stack, gateway: Gateway) -> Tenants:
    acme_key, globex_key = stack.create_key("acme"), stack.create_key("globex")
    acme, globex = gateway.as_key(acme_key), gateway.as_key(globex_key)
    indexer = stack.start_stage("indexer")
    try:
        stack.wait_consuming(indexer)
        data = manual_pdf(unit=UNIT)  # the same bytes for both
        acme_doc = upload_ready(acme, data, "manual.pdf")["doc_id"]
        globex_doc = upload_ready(globex, data, "manual.pdf")["doc_id"]
    finally:
        stack.stop(indexer)
    first = ask(acme, doc_ids=[acme_doc])
    assert first.status_code == 200, first.text + stack.logs()
    again = ask(acme, doc_ids=[acme_doc])
    assert stages_of(again.json()) == ["navigator"], "the acme question should now be served from the cache"
    other = ask(globex, doc_ids=[globex_doc])
    assert other.status_code == 200, other.text
    chat = acme.post("/v1/chats", json={"doc_ids": [acme_doc]}).json()["chat_id"]
    turn = acme.post(f"/v1/chats/{chat}/messages", json={"question": QUESTION}, timeout=120)
    assert turn.status_code == 200, turn.text
    return Tenants(acme, globex, acme_doc, globex_doc, first.json(), other.json(), acme_key[4:16], chat,
                   gateway.as_key(stack.create_key("globex", admin=True)))


def test_the_same_pdf_gets_one_document_per_tenant(tenants: Tenants) -> None:
    assert tenants.acme_doc != tenants.globex_doc
    assert [d["doc_id"] for d in tenants.acme.get("/v1/documents").json()] == [tenants.acme_doc]
    assert [d["doc_id"] for d in tenants.globex.get("/v1/documents").json()] == [tenants.globex_doc]


def test_the_same_question_over_the_same_pdf_is_not_answered_from_the_other_tenants_cache(tenants: Tenants) -> None:
    answer = tenants.globex_query
    assert stages_of(answer) == ["navigator", "compressor", "verifier"], "globex got a cached answer"
    assert FACT in answer["answer"]
    assert {c["doc_id"] for c in answer["citations"]} == {tenants.globex_doc}
    assert {c["doc_id"] for c in tenants.acme_query["citations"]} == {tenants.acme_doc}


def test_a_question_over_all_documents_stays_within_the_tenant(tenants: Tenants) -> None:
    answer = ask(tenants.globex).json()
    assert {c["doc_id"] for c in answer["citations"]} <= {tenants.globex_doc}


MISSING_DOC, MISSING_QUERY, MISSING_CHAT = "f" * 16, "0" * 32, "1" * 32


def probe(t: Tenants, method: str, path: str) -> None:
    """Globex, with its own key, at acme's documents and queries through this route."""
    doc, query = t.acme_doc, t.acme_query["query_id"]
    g = t.globex
    not_found = {
        ("GET", "/v1/documents/{doc_id}"): lambda d, q: g.get(f"/v1/documents/{d}"),
        ("GET", "/v1/documents/{doc_id}/tree"): lambda d, q: g.get(f"/v1/documents/{d}/tree"),
        ("GET", "/v1/documents/{doc_id}/pdf"): lambda d, q: g.get(f"/v1/documents/{d}/pdf"),
        ("GET", "/v1/documents/{doc_id}/pages/{number}"): lambda d, q: g.get(f"/v1/documents/{d}/pages/2"),
        ("GET", "/v1/documents/{doc_id}/pages/{number}/image"): lambda d, q: g.get(f"/v1/documents/{d}/pages/2/image"),
        ("GET", "/v1/documents/{doc_id}/pages/{number}/boxes"):
            lambda d, q: g.get(f"/v1/documents/{d}/pages/2/boxes", params={"text": FACT}),
        ("GET", "/v1/documents/{doc_id}/pages/{number}/text-layer"):
            lambda d, q: g.get(f"/v1/documents/{d}/pages/2/text-layer"),
        ("DELETE", "/v1/documents/{doc_id}"): lambda d, q: g.delete(f"/v1/documents/{d}"),
        ("GET", "/v1/queries/{query_id}"): lambda d, q: g.get(f"/v1/queries/{q}"),
        ("POST", "/v1/query"): lambda d, q: ask(g, doc_ids=[d]),
        ("POST", "/v1/verify"): lambda d, q: g.post("/v1/verify", json={
            "answer": f"The valve opens at {FACT}.", "citations": [{"doc_id": d, "pages": [2]}]}),
        ("POST", "/v1/chats"): lambda d, q: g.post("/v1/chats", json={"doc_ids": [d]}),
        ("POST", "/v1/chat/completions"): lambda d, q: g.post("/v1/chat/completions", json={
            "model": f"treerag/{d}", "messages": [{"role": "user", "content": QUESTION}]}),
    }
    chat_routes = {
        ("GET", "/v1/chats/{chat_id}"): lambda c: g.get(f"/v1/chats/{c}"),
        ("GET", "/v1/chats/{chat_id}/messages"): lambda c: g.get(f"/v1/chats/{c}/messages"),
        ("POST", "/v1/chats/{chat_id}/messages"): lambda c: g.post(f"/v1/chats/{c}/messages",
                                                                   json={"question": QUESTION}),
        ("DELETE", "/v1/chats/{chat_id}"): lambda c: g.delete(f"/v1/chats/{c}"),
    }
    if (method, path) in chat_routes:
        call = chat_routes[(method, path)]
        response, missing = call(t.acme_chat), call(MISSING_CHAT)
        assert response.status_code == 404, (method, path, response.status_code, response.text)
        assert response.text.replace(t.acme_chat, MISSING_CHAT) == missing.text
        assert t.acme.get(f"/v1/chats/{t.acme_chat}/messages").json()[0]["answer"]
        return
    if (method, path) == ("GET", "/v1/chats"):
        assert t.acme_chat not in {c["chat_id"] for c in g.get("/v1/chats").json()}
        return
    if (method, path) == ("GET", "/v1/keys"):
        assert t.acme_key_id not in {k["key_id"] for k in t.globex_admin.get("/v1/keys").json()}
        return
    if (method, path) == ("POST", "/v1/keys"):
        made = t.globex_admin.post("/v1/keys", json={"role": "reader"}).json()
        assert made["tenant"] == "globex"
        assert t.globex_admin.as_key(made["key"]).get(f"/v1/documents/{doc}").status_code == 404
        return
    if (method, path) == ("DELETE", "/v1/keys/{key_id}"):
        response = t.globex_admin.delete(f"/v1/keys/{t.acme_key_id}")
        missing = t.globex_admin.delete("/v1/keys/0123456789ab")
        assert response.status_code == 404
        assert response.text.replace(t.acme_key_id, "0123456789ab") == missing.text
        assert t.acme.get("/v1/documents").status_code == 200  # acme's key still works
        return
    if (method, path) == ("GET", "/v1/models"):
        assert f"treerag/{doc}" not in {m["id"] for m in g.get("/v1/models").json()["data"]}
        return
    if (method, path) in not_found:
        call = not_found[(method, path)]
        response, missing = call(doc, query), call(MISSING_DOC, MISSING_QUERY)
        assert response.status_code == 404, (method, path, response.status_code, response.text)
        # Word for word the answer about an id that does not exist: nothing tells it exists.
        unnamed = response.text.replace(doc, MISSING_DOC).replace(query, MISSING_QUERY)
        assert (response.status_code, unnamed) == (missing.status_code, missing.text)
        return
    if (method, path) == ("GET", "/v1/documents"):
        for params in ({}, {"file_name": "manual.pdf"}, {"status": "ready"}):
            listed = g.get("/v1/documents", params=params).json()
            assert doc not in {d["doc_id"] for d in listed}
        return
    if (method, path) == ("POST", "/v1/documents"):
        # The same bytes uploaded by globex made globex's own document; acme's is untouched.
        assert t.globex_doc != doc and t.acme.get(f"/v1/documents/{doc}").json()["status"] == "ready"
        return
    if (method, path) in {("GET", "/metrics"), ("GET", "/v1/pipeline")}:
        # Figures over every tenant: admin keys only.
        assert g.get(path).status_code == 403
        return
    if path in PUBLIC_ROUTES:
        response = httpx.request(method, f"{g.url}{path}", timeout=10)
        assert doc not in response.text
        return
    pytest.fail(f"{method} {path} is a new route: add a probe of its tenant scoping to this test")


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_no_route_reaches_another_tenants_documents_or_queries(tenants: Tenants, method: str, path: str) -> None:
    probe(tenants, method, path)
    # Acme still has everything (a probe such as DELETE changed nothing of it).
    assert tenants.acme.get(f"/v1/documents/{tenants.acme_doc}/pages/2").status_code == 200
    assert tenants.acme.get(f"/v1/queries/{tenants.acme_query['query_id']}").status_code == 200


def test_a_revoked_key_is_refused_within_the_key_cache_time(stack: Stack, tenants: Tenants) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "treerag", "keys", "--mongo-url", stack.mongo_url, "--mongo-db", stack.db_name,
         "revoke", tenants.acme_key_id], cwd=REPO, env=stack.env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    refused = wait_until(lambda: (r := tenants.acme.get("/v1/documents")).status_code == 401 and r, 30,
                         "the revoked key to be refused")
    assert refused.headers["www-authenticate"].startswith("Bearer")
    listing = subprocess.run(
        [sys.executable, "-m", "treerag", "keys", "--mongo-url", stack.mongo_url, "--mongo-db", stack.db_name,
         "list"], cwd=REPO, env=stack.env(), capture_output=True, text=True, timeout=120).stdout
    assert tenants.acme_key_id in listing and "revoked" in listing
    assert tenants.acme.key is not None and tenants.acme.key[17:] not in listing
