"""A URL's password is masked wherever the URL is quoted; nothing else in the text changes."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from shared.adapters.logs import configure_logging
from shared.text.secrets import redact


@pytest.mark.parametrize(("text", "shown"), [
    ("mongodb://app:s3cr%40t@db.example:27017/?authSource=admin", "mongodb://app:***@db.example:27017/?authSource=admin"),
    ("MongoDB at mongodb://app:p@ss@db:27017/ is down", "MongoDB at mongodb://app:***@db:27017/ is down"),
    ("mongodb+srv://u:pw@cluster0.example.net/db", "mongodb+srv://u:***@cluster0.example.net/db"),
    ("mongodb://u:pw@h1:1,h2:2/db", "mongodb://u:***@h1:1,h2:2/db"),
    ("'sasl://u:pw@broker:9093' then http://a:b@c/x", "'sasl://u:***@broker:9093' then http://a:***@c/x"),
])
def test_the_password_of_every_url_is_masked(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize("text", ["mongodb://db:27017/", "http://host:8080/path@x", "no url, a:b@c", ""])
def test_text_without_a_password_is_left_as_it_is(text: str) -> None:
    assert redact(text) == text


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging(stream=stream)
    try:
        yield stream
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def test_no_log_line_carries_a_password_whoever_logs_it(captured: io.StringIO) -> None:
    url = "mongodb://app:hunter2-secret@db:27017/"
    log = logging.getLogger("shared.adapters.mongo")
    log.warning("connecting to %s", url)
    log.warning("store down", extra={"fields": {"url": url}})
    try:
        raise ConnectionError(f"could not reach {url}")
    except ConnectionError:
        log.exception("driver failed")
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert len(lines) == 3 and "hunter2-secret" not in captured.getvalue()
    assert lines[0]["msg"] == "connecting to mongodb://app:***@db:27017/" and lines[1]["url"].startswith("mongodb://app:***@")
    assert "could not reach mongodb://app:***@db" in lines[2]["exc"]
