"""Uploading many files: several per request, a folder through `treerag upload`, and paging
through the listing (newest first, by status) on the real services."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import httpx
import pytest

from tests.support import pdfs
from tests.support.integration.stack import Gateway, ServiceProcess
from tests.support.integration.uploads import wait_document
from treerag.cli import main

pytestmark = pytest.mark.integration


def unique_pdf(pages: int = 2) -> bytes:
    return pdfs.plain_pdf(pages=pages, text=f"Run {uuid.uuid4().hex}. " + pdfs.BODY)


def listing(gateway: Gateway, **params: str | int) -> httpx.Response:
    return gateway.get("/v1/documents", params=params, timeout=30)


def every_page(gateway: Gateway, **params: str | int) -> list[dict[str, object]]:
    docs: list[dict[str, object]] = []
    response = listing(gateway, **params)
    while True:
        assert response.status_code == 200, response.text
        docs += response.json()
        cursor = response.headers.get("X-Next-Cursor")
        if cursor is None:
            return docs
        assert 'rel="next"' in response.headers["Link"]
        response = listing(gateway, **params, cursor=cursor)


def test_several_files_in_one_request_each_get_their_result_and_the_listing_pages_through_them(
        gateway: Gateway, indexer: ServiceProcess) -> None:
    sent = [("first.pdf", unique_pdf(2)), ("not-a-pdf.pdf", pdfs.not_a_pdf()),
            ("locked.pdf", pdfs.encrypted_pdf()), ("second.pdf", unique_pdf(3))]
    response = gateway.post("/v1/documents", timeout=60,
                            files=[("files", (name, data, "application/pdf")) for name, data in sent])
    assert response.status_code == 202, response.text
    results = response.json()["files"]
    assert [r["status_code"] for r in results] == [202, 415, 202, 202]
    assert "not a PDF" in results[1]["error"] and results[1]["document"] is None
    ids = [r["document"]["doc_id"] for r in results if r["document"]]
    finished = {doc_id: wait_document(gateway, doc_id)["status"] for doc_id in ids}
    assert [finished[i] for i in ids] == ["ready", "failed", "ready"]

    paged = every_page(gateway, limit=1)
    listed = [d["doc_id"] for d in paged]
    assert len(listed) == len(set(listed))  # no document on two pages
    positions = [listed.index(i) for i in ids]
    assert positions == sorted(positions, reverse=True)  # newest first
    assert [d["doc_id"] for d in every_page(gateway, limit=500)] == listed

    failed = every_page(gateway, status="failed", limit=2)
    assert ids[1] in {d["doc_id"] for d in failed} and {d["status"] for d in failed} == {"failed"}

    cursor = listing(gateway, status="failed", limit=1).headers.get("X-Next-Cursor")
    if cursor is not None:
        assert listing(gateway, cursor=cursor).status_code == 400  # made for another filter
    forged = base64.urlsafe_b64encode(b'{"v": 1, "position": "x"}').decode()
    bad = listing(gateway, cursor=forged)
    assert bad.status_code == 400 and "cursor" in bad.json()["detail"]
    assert listing(gateway, limit=0).status_code == 422


def test_treerag_upload_sends_a_folder_once(gateway: Gateway, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "folder"
    (folder / "nested").mkdir(parents=True)
    for n in range(3):
        pdfs.write(folder / ("nested" if n else ""), f"part-{n}.pdf", unique_pdf(1 + n))
    state = tmp_path / "state.json"
    command = ["upload", str(folder), "--url", gateway.url, "--state", str(state), "--batch-files", "2",
               *(["--key", gateway.key] if gateway.key else [])]
    assert main(command) == 0
    assert "3 files: 3 uploaded, 0 skipped" in capsys.readouterr().out
    assert main(command) == 0
    assert "3 files: 0 uploaded, 3 skipped" in capsys.readouterr().out
    names = {d["file_name"] for d in every_page(gateway, limit=100)}
    assert {"part-0.pdf", "part-1.pdf", "part-2.pdf"} <= names
