"""Documents are addressed by id; file names are labels. And what the running gateway shows
to a browser on another site."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, ServiceProcess
from tests.support.integration.uploads import upload_ready

pytestmark = pytest.mark.integration


def raw_upload(gateway: Gateway, file_name: bytes, data: bytes) -> httpx.Response:
    """The file name's bytes as sent: httpx would percent-encode control characters."""
    body = (b'--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="' + file_name
            + b'"\r\nContent-Type: application/pdf\r\n\r\n' + data + b"\r\n--BOUNDARY--\r\n")
    return gateway.post("/v1/documents", content=body,
                        headers={"Content-Type": "multipart/form-data; boundary=BOUNDARY"}, timeout=60)


def test_two_documents_with_one_name_both_stay_reachable_by_id(gateway: Gateway, indexer: ServiceProcess) -> None:
    first_pdf, second_pdf = manual_pdf(unit=801), manual_pdf(unit=802)
    first = upload_ready(gateway, first_pdf, "manual-8xx.pdf")
    second = upload_ready(gateway, second_pdf, "manual-8xx.pdf")
    assert first["doc_id"] != second["doc_id"]

    for document, data in ((first, first_pdf), (second, second_pdf)):
        by_id = gateway.get(f"/v1/documents/{document['doc_id']}", timeout=10)
        assert by_id.status_code == 200 and by_id.json()["file_name"] == "manual-8xx.pdf"
        assert gateway.get(f"/v1/documents/{document['doc_id']}/pdf", timeout=10).content == data
    named = gateway.get("/v1/documents", params={"file_name": "manual-8xx.pdf"}, timeout=10).json()
    assert sorted(d["doc_id"] for d in named) == sorted([first["doc_id"], second["doc_id"]])
    # A name is not an address: it finds nothing, whoever uploaded it.
    assert gateway.get("/v1/documents/manual-8xx.pdf", timeout=10).status_code == 404
    answer = gateway.post("/v1/query", timeout=120, json={
        "question": "At what pressure does the safety valve of unit 802 open?", "doc_ids": [second["doc_id"]]})
    assert answer.status_code == 200 and "812 bar" in answer.json()["answer"], answer.text


@pytest.mark.parametrize("name", [b"bad\nname.pdf", b"bad\x00name.pdf", b"bad\x07name.pdf"])
def test_file_names_with_control_characters_are_refused_and_nothing_is_stored(gateway: Gateway, name: bytes) -> None:
    response = raw_upload(gateway, name, manual_pdf(unit=803))
    assert response.status_code == 422, response.text
    assert "control characters" in response.json()["detail"][0]["msg"]
    listed = gateway.get("/v1/documents", timeout=10).json()
    assert all("bad" not in d["file_name"] for d in listed)


def headers_of(response: httpx.Response) -> dict[str, Any]:
    return {k.lower(): v for k, v in response.headers.items()}


def test_gateway_refuses_foreign_hosts_and_origins_and_sends_security_headers(gateway: Gateway) -> None:
    ok = gateway.get("/v1/documents", timeout=10)
    rebinding = gateway.get("/v1/documents", headers={"Host": "attacker.example"}, timeout=10)
    missing = gateway.get("/v1/documents/0000000000000000", timeout=10)
    for response in (ok, rebinding, missing):
        headers = headers_of(response)
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
    assert ok.status_code == 200 and rebinding.status_code == 400 and missing.status_code == 404

    # CORS is off unless configured: a page on another site gets no permission to read or upload.
    preflight = gateway.options("/v1/documents", timeout=10, headers={
        "Origin": "https://attacker.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in headers_of(preflight)
    cross = gateway.get("/v1/documents", headers={"Origin": "https://attacker.example"}, timeout=10)
    assert "access-control-allow-origin" not in headers_of(cross)


def listening_addresses(pid: int) -> set[str]:
    """The local addresses `pid` listens on (TCP, IPv4 and IPv6), from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    addresses = set()
    for table, width in (("tcp", 8), ("tcp6", 32)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(fields[1].split(":")[0][:width])
            # /proc prints each 32-bit word little-endian.
            words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            addresses.add(str(ipaddress.ip_address(words)))
    return addresses


def test_every_service_listens_on_loopback_only(gateway: Gateway, query_stages: list[ServiceProcess],
                                                indexer: ServiceProcess) -> None:
    for process in (gateway.process, indexer, *query_stages):
        addresses = listening_addresses(process.pid)
        assert addresses, f"{process.name} listens nowhere?"
        assert all(ipaddress.ip_address(a).is_loopback for a in addresses), (process.name, addresses)
