"""DOCX, HTML, Markdown and text uploads through the gateway: sniffed, indexed by the indexer
stage from their headings, asked over with page citations; a bad file fails with its reason."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import formats
from tests.support.integration.stack import Gateway, ServiceProcess, Stack
from tests.support.integration.uploads import upload, wait_document

pytestmark = pytest.mark.integration

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def uploaded(gateway: Gateway, data: bytes, name: str, content_type: str) -> dict[str, Any]:
    response = upload(gateway, data, name, content_type)
    assert response.status_code == 202, response.text
    return wait_document(gateway, response.json()["doc_id"])


def test_each_format_is_indexed_and_cited_by_page(stack: Stack, gateway: Gateway, indexer: ServiceProcess) -> None:
    cases = [
        (formats.guide_docx(), "guide.docx", DOCX_TYPE, "docx"),
        (formats.guide_html(), "guide.html", "text/html", "html"),
        # No extension: the content type says Markdown.
        (formats.guide_markdown(), "guide", "text/markdown", "markdown"),
        (formats.guide_text(), "guide.txt", "text/plain", "text"),
    ]
    for data, name, content_type, kind in cases:
        document = uploaded(gateway, data, name, content_type)
        assert document["status"] == "ready", (document, stack.logs())
        assert (document["format"], document["builder"]) == (kind, "outline")
        doc_id = document["doc_id"]
        tree = gateway.get(f"/v1/documents/{doc_id}/tree", timeout=10).json()
        sections = [child for node in tree["nodes"] for child in node["children"]]
        (codes,) = [n for n in sections if n["title"] == "3.2 Error codes"]
        response = gateway.post("/v1/query", timeout=120,
                                json={"question": "What does error code 41 mean?", "doc_ids": [doc_id]})
        assert response.status_code == 200, response.text + stack.logs()
        assert response.json()["citations"][0]["pages"] == [codes["page_start"]]
        original = gateway.get(f"/v1/documents/{doc_id}/pdf", timeout=10)
        assert original.content == data and original.headers["content-type"].startswith(content_type)
        image = gateway.get(f"/v1/documents/{doc_id}/pages/1/image", timeout=10)
        assert image.status_code == 409 and "text with no image" in image.json()["detail"]


def test_a_bad_docx_fails_with_the_same_kind_of_reason_as_a_bad_pdf(gateway: Gateway, indexer: ServiceProcess) -> None:
    document = uploaded(gateway, formats.ole_file(encrypted=True), "locked.docx", DOCX_TYPE)
    assert document["status"] == "failed"
    assert "encrypted with a password" in document["reason"] and "\n" not in document["reason"]
