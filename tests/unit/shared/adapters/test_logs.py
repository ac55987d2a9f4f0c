"""A service's log file is rotated by size: an outage logging a line per reconnect attempt
cannot fill the disk (TREERAG_LOG_FILE, TREERAG_LOG_MAX_BYTES, TREERAG_LOG_BACKUPS)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.adapters.logs import configure_service_logging
from shared.settings import Settings


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)


def test_a_service_log_file_stays_within_its_size_and_backups(tmp_path: Path, restored_logging: None) -> None:
    log_file = tmp_path / "logs" / "indexer-0.log"
    max_bytes, backups = 20_000, 2
    configure_service_logging(Settings(log_file=log_file, log_max_bytes=max_bytes, log_backups=backups))
    logger = logging.getLogger("aiokafka.conn")
    for attempt in range(5_000):  # about 1 MB of reconnect warnings
        logging.getLogger("shared.adapters.kafka").warning("connection to the broker failed", extra={
            "fields": {"attempt": attempt, "bootstrap": "127.0.0.1:9092"}})
    logger.debug("not written: aiokafka is held at WARNING")

    files = sorted(p.name for p in log_file.parent.iterdir())
    assert files == ["indexer-0.log", "indexer-0.log.1", "indexer-0.log.2"]
    for name in files:
        assert (log_file.parent / name).stat().st_size <= max_bytes
    newest = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert newest[-1]["attempt"] == 4_999  # the newest lines are in the current file
    assert all(line["level"] == "warning" for line in newest)


def test_without_a_log_file_a_service_logs_to_stderr(restored_logging: None,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    configure_service_logging(Settings())
    logging.getLogger("treerag.test").warning("to stderr")
    assert json.loads(capsys.readouterr().err.splitlines()[-1])["msg"] == "to stderr"
