"""Uploading over the HTTP API of a running gateway and waiting for the document to be indexed."""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.support.integration.stack import Gateway, wait_until

READY_TIMEOUT_S = 120.0


def upload(gateway: Gateway, data: bytes, file_name: str, content_type: str = "application/pdf",
           **form: str) -> httpx.Response:
    return gateway.post("/v1/documents", files={"file": (file_name, data, content_type)}, data=form, timeout=60)


def wait_document(gateway: Gateway, doc_id: str, statuses: tuple[str, ...] = ("ready", "failed"),
                  timeout_s: float = READY_TIMEOUT_S) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        response = gateway.get(f"/v1/documents/{doc_id}", timeout=10)
        if response.status_code != 200:
            return None
        body = response.json()
        return body if body["status"] in statuses else None

    return wait_until(finished, timeout_s, f"document {doc_id} to be {'/'.join(statuses)}", interval_s=0.25)


def upload_ready(gateway: Gateway, data: bytes, file_name: str) -> dict[str, Any]:
    response = upload(gateway, data, file_name)
    assert response.status_code == 202, response.text
    document = wait_document(gateway, response.json()["doc_id"])
    assert document["status"] == "ready", document
    return document


def elapsed_since(start: float) -> float:
    return time.monotonic() - start
