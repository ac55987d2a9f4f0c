"""The web app's pages: each renders, loads only same-origin assets that exist, runs no inline
script or style (so the strict Content-Security-Policy holds), escapes what it is given, and
`/docs` works with no network.

The app runs without its lifespan (no Kafka, no MongoDB): the pages need neither to render.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from services.gateway.app import create_app
from services.gateway.web import pages
from shared.settings import Settings

PAGES = ["/", "/documents/0123456789abcdef", "/ask", "/pipeline"]
WEB = Path(pages.__file__).parent


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    app = create_app(Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/", auth="off"))
    yield TestClient(app, base_url="http://127.0.0.1:8000")  # not entered: no lifespan (Kafka, MongoDB)


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside <script> and <style> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in and data.strip():
            self.inline.append(f"<{self._in}>{data.strip()[:60]}")


def parsed(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def assets(tags: Tags) -> list[str]:
    return [attrs[name] or "" for tag, attrs in tags.tags for name in ("src", "href")
            if name in attrs and (tag in ("script", "img") or (tag == "link" and name == "href"))]


@pytest.mark.parametrize("path", [*PAGES, "/docs", "/redoc"])
def test_each_page_loads_only_same_origin_assets_that_exist(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    tags = parsed(response.text)
    loaded = assets(tags)
    assert any(src.endswith(".js") for src in loaded)
    for src in loaded:
        assert src.startswith("/") and not src.startswith("//"), src
        asset = client.get(src)
        assert asset.status_code == 200, src
        assert asset.content


@pytest.mark.parametrize("path", [*PAGES, "/docs", "/redoc"])
def test_no_page_runs_inline_script_or_style(client: TestClient, path: str) -> None:
    response = client.get(path)
    policy = response.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    tags = parsed(response.text)
    assert tags.inline == []
    for tag, attrs in tags.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "style" not in attrs or path in ("/docs", "/redoc"), (tag, attrs)
        if tag == "script":
            assert attrs.get("src"), "every script is a file"


def test_the_document_page_escapes_the_id_it_is_given(client: TestClient) -> None:
    html = client.get('/documents/x"><script>alert(1)<').text
    assert "<script>alert(1)" not in html
    assert 'data-doc-id="x&#34;&gt;&lt;script&gt;alert(1)&lt;"' in html


def test_the_pages_link_to_each_other(client: TestClient) -> None:
    links = {attrs.get("href") for tag, attrs in parsed(client.get("/").text).tags if tag == "a"}
    assert {"/", "/ask", "/pipeline", "/docs"} <= links


def web_files() -> list[Path]:
    return [p for p in WEB.rglob("*") if p.is_file() and p.suffix in (".html", ".js", ".css")]


@pytest.mark.parametrize("path", web_files(), ids=lambda p: str(p.relative_to(WEB)))
def test_the_web_app_names_no_other_origin(path: Path) -> None:
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", path.read_text()), path


@pytest.mark.parametrize("path", [p for p in web_files() if p.suffix == ".js"], ids=lambda p: p.name)
def test_every_module_a_script_imports_exists(path: Path) -> None:
    for name in re.findall(r'from "\./([\w.-]+)"', path.read_text()):
        assert (path.parent / name).is_file(), name


def test_api_docs_work_offline(client: TestClient) -> None:
    html = client.get("/docs").text
    loaded = assets(parsed(html))
    assert "/static/api-docs/swagger-ui-bundle.js" in loaded
    assert "/static/api-docs/swagger-ui.css" in loaded
    init = client.get("/static/js/swagger-init.js").text
    assert "SwaggerUIBundle" in init and 'data-openapi-url="/openapi.json"' in html
    spec = client.get("/openapi.json").json()
    assert "/v1/documents/{doc_id}/pages/{number}/image" in spec["paths"]
    assert "/v1/documents/{doc_id}/pages/{number}/boxes" in spec["paths"]
    assert "/" not in spec["paths"]  # pages are not API


def test_the_static_files_cannot_reach_outside_their_folder(client: TestClient) -> None:
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/api-docs/../../__init__.py"):
        assert client.get(path).status_code == 404
