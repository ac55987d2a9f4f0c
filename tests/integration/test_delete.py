"""Deleting a document over HTTP: nothing of it stays in any collection or stage cache."""

from __future__ import annotations

from typing import Any

import bson
import httpx
import pytest

from .conftest import upload_ready
from .pdfs import manual_pdf
from .stack import Gateway, ServiceProcess, Stack, wait_until

pytestmark = pytest.mark.integration


def ask(gateway: Gateway, question: str, **body: Any) -> httpx.Response:
    return gateway.post("/v1/query", json={"question": question, **body}, timeout=120)


def collections_holding(db: Any, needle: str) -> dict[str, int]:
    """Rows of every collection of the database whose stored bytes contain `needle`."""
    found: dict[str, int] = {}
    for name in db.list_collection_names():
        hits = sum(1 for row in db[name].find({}) if needle.encode() in bson.encode(row))
        if hits:
            found[name] = hits
    return found


def forgot(process: ServiceProcess, doc_id: str) -> bool | None:
    return any(r.get("msg") == "deleted document forgotten" and r.get("doc_id") == doc_id
               for r in process.log_records()) or None


def test_deleted_document_leaves_no_text_in_any_collection_or_stage_cache(
    stack: Stack, gateway: Gateway, indexer: ServiceProcess, query_stages: list[ServiceProcess], db: Any
) -> None:
    gone = upload_ready(gateway, manual_pdf(unit=611), "unit-611.pdf")["doc_id"]
    kept = upload_ready(gateway, manual_pdf(unit=612), "unit-612.pdf")["doc_id"]
    question = "At what pressure does the safety valve of unit 611 open?"
    first = ask(gateway, question, doc_ids=[gone])
    assert first.status_code == 200 and "621 bar" in first.json()["answer"], first.text
    # Asked again: answered from the cache (the navigator now keeps it in memory too).
    again = ask(gateway, question, doc_ids=[gone]).json()
    assert [t["stage"] for t in again["timings"]["stages"]] == ["navigator"]
    text = "opens at a pressure of 621 bar"
    assert "query_results" in collections_holding(db, text)
    assert "page_chunks" in collections_holding(db, text)

    deleted = gateway.delete(f"/v1/documents/{gone}", timeout=30)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["doc_id"] == gone and deleted.json()["queries_removed"] >= 2

    assert collections_holding(db, text) == {}
    assert collections_holding(db, gone) == {}, "a collection still names the deleted document"
    for path in ("", "/tree", "/pdf", "/pages/1"):
        assert gateway.get(f"/v1/documents/{gone}{path}", timeout=10).status_code == 404
    assert gateway.get(f"/v1/queries/{first.json()['query_id']}", timeout=10).status_code == 404
    assert gateway.delete(f"/v1/documents/{gone}", timeout=10).status_code == 404
    assert gone not in {d["doc_id"] for d in gateway.get("/v1/documents", timeout=10).json()}

    # Every query stage that kept something of it in memory dropped it.
    navigator, _, verifier = query_stages
    for process in (navigator, verifier):
        wait_until(lambda p=process: forgot(p, gone), 60, f"{process.name} to forget the deleted document")

    # Asked over everything, the deleted document is never cited; the other one still answers.
    after = ask(gateway, question)
    assert after.status_code == 200, after.text + stack.logs()
    assert all(c["doc_id"] != gone for c in after.json()["citations"])
    assert "621 bar" not in (after.json()["answer"] or "")
    other = ask(gateway, "At what pressure does the safety valve of unit 612 open?", doc_ids=[kept])
    assert other.status_code == 200 and "622 bar" in other.json()["answer"], other.text
