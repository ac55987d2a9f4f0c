"""The gateway's edge, before any backend is involved: Host allow-list, CORS, security headers,
file names, and the interfaces its listeners bind to."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from services.gateway.__main__ import parse_args
from services.gateway.app import create_app
from shared.adapters import metrics
from shared.model.file_names import FileNameError, ascii_fallback, file_name_label
from shared.settings import Settings
from tests.support.gateway.fake_gateway import FakeGateway

PDF = b"%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"


def client(**settings: str) -> TestClient:
    # No `with`: the lifespan (Kafka, MongoDB) does not run; these checks come before any backend.
    return TestClient(create_app(Settings(**settings)), base_url="http://127.0.0.1:8000")


def assert_security_headers(headers: dict[str, str] | object) -> None:
    csp = headers["content-security-policy"]  # type: ignore[index]
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    assert headers["x-content-type-options"] == "nosniff"  # type: ignore[index]
    assert headers["x-frame-options"] == "DENY"  # type: ignore[index]


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "localhost"])
def test_loopback_host_names_are_served_by_default(host: str) -> None:
    response = client().get("/healthz", headers={"Host": host})
    assert response.status_code == 200
    assert_security_headers(response.headers)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", ""])
def test_other_host_names_are_refused_by_default_against_dns_rebinding(host: str) -> None:
    response = client().get("/healthz", headers={"Host": host})
    assert response.status_code == 400
    assert "TREERAG_ALLOWED_HOSTS" in response.json()["detail"]
    assert_security_headers(response.headers)


def test_allowed_hosts_are_configurable_with_wildcards_and_networks() -> None:
    app = client(allowed_hosts="api.example.com,*.internal.example,172.16.0.0/12")
    assert app.get("/healthz", headers={"Host": "api.example.com"}).status_code == 200
    assert app.get("/healthz", headers={"Host": "gw.internal.example:8000"}).status_code == 200
    assert app.get("/healthz", headers={"Host": "172.18.0.5:8000"}).status_code == 200
    assert app.get("/healthz", headers={"Host": "127.0.0.1"}).status_code == 400
    assert app.get("/healthz", headers={"Host": "10.0.0.5"}).status_code == 400


def test_every_response_carries_the_security_headers() -> None:
    app = client()
    for response in (app.get("/v1/documents"),  # 503: the backends are not up
                     app.get("/no/such/route"),
                     app.post("/v1/query", json={}),
                     app.get("/openapi.json")):
        assert_security_headers(response.headers)
    docs = app.get("/docs")
    assert docs.status_code == 200 and "frame-ancestors 'none'" in docs.headers["content-security-policy"]


def test_cross_origin_calls_are_refused_unless_origins_are_configured() -> None:
    origin = "https://app.example.com"
    preflight = {"Origin": origin, "Access-Control-Request-Method": "POST"}
    closed = client()
    assert "access-control-allow-origin" not in closed.options("/v1/documents", headers=preflight).headers
    assert "access-control-allow-origin" not in closed.get("/healthz", headers={"Origin": origin}).headers

    opened = client(cors_origins=f"{origin}, https://other.example.com")
    allowed = opened.options("/v1/documents", headers=preflight)
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == origin
    assert_security_headers(allowed.headers)
    refused = opened.options("/v1/documents", headers={**preflight, "Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in refused.headers


@pytest.mark.parametrize("name", ["a\nb.pdf", "a\x00b.pdf", "report\r.pdf", "x\x1b[31m.pdf", "del\x7f.pdf",
                                  "line\u2028sep.pdf"])
def test_file_names_with_control_characters_are_refused(name: str) -> None:
    with pytest.raises(FileNameError, match="control characters"):
        file_name_label(name, fallback="x.pdf")


def test_file_name_labels_keep_the_last_path_component_and_any_script() -> None:
    assert file_name_label("C:\\scans\\보고서 2024.pdf", fallback="x.pdf") == "보고서 2024.pdf"
    assert file_name_label("../../etc/passwd.pdf", fallback="x.pdf") == "passwd.pdf"
    assert file_name_label("", fallback="abc.pdf") == "abc.pdf"
    with pytest.raises(FileNameError, match="at most 255"):
        file_name_label("a" * 300 + ".pdf", fallback="x.pdf")
    assert ascii_fallback('보고서 "q"?\n.pdf') == "___ _q___.pdf"


def raw_upload(file_name: bytes, data: bytes) -> tuple[bytes, dict[str, str]]:
    """A multipart body with the file name's bytes as sent (HTTP clients such as httpx
    percent-encode control characters; other clients do not)."""
    body = (b'--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="' + file_name
            + b'"\r\nContent-Type: application/pdf\r\n\r\n' + data + b"\r\n--BOUNDARY--\r\n")
    return body, {"Content-Type": "multipart/form-data; boundary=BOUNDARY"}


@pytest.mark.parametrize("name", [b"a\nb.pdf", b"a\x00b.pdf", b"tab\there.pdf", b"esc\x1b.pdf"])
def test_upload_named_with_a_control_character_is_refused_with_422(name: bytes) -> None:
    body, headers = raw_upload(name, PDF)
    gateway = FakeGateway()
    with gateway.client() as running:
        response = running.post("/v1/documents", content=body, headers=headers)
    assert response.status_code == 422, response.text
    assert "control characters" in response.json()["detail"][0]["msg"]
    assert not gateway.store.documents and not gateway.store.pdfs and not gateway.bus.events


def test_listeners_bind_to_loopback_unless_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_args([]).host == "127.0.0.1"
    monkeypatch.setenv("TREERAG_GATEWAY_HOST", "0.0.0.0")
    assert parse_args([]).host == "0.0.0.0"
    assert Settings().metrics_host == "127.0.0.1"
    assert metrics.start_metrics_server(0)
    server = metrics._serving[0]
    assert server.server_address[0] == "127.0.0.1"
