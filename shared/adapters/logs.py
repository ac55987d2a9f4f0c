"""Structured JSON logs with correlation fields (doc_id, query_id, event_id) carried by context.
Every line has the passwords of the URLs it quotes masked (`shared/text/secrets.py`), whatever
logged them: a message, a field or a driver's exception."""

from __future__ import annotations

import contextvars
import json
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from shared.settings import Settings
from shared.text.secrets import redact

# Never mutated: `correlated` sets a new dict, so the shared default stays empty.
_correlation: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "treerag_correlation", default={}  # noqa: B039
)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_correlation.get())
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(entry, ensure_ascii=False, default=str))


def configure_logging(level: str = "INFO", stream: Any = None, file: Path | None = None,
                      max_bytes: int = 0, backups: int = 0) -> None:
    """JSON lines to `stream` (stderr), or to `file`, rotated when it would pass `max_bytes`
    (`backups` older files kept as file.1 ... file.N; 0 bytes: never rotated)."""
    handler: logging.Handler
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    else:
        handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for old in root.handlers:
        old.close()
    root.handlers[:] = [handler]
    root.setLevel(level)


def configure_service_logging(settings: Settings) -> None:
    """A service's logs: level from TREERAG_LOG_LEVEL; to stderr (as containers expect), or to
    TREERAG_LOG_FILE rotated at TREERAG_LOG_MAX_BYTES keeping TREERAG_LOG_BACKUPS files, so an
    outage that logs a reconnect line per second cannot fill the disk."""
    configure_logging(os.environ.get("TREERAG_LOG_LEVEL", "INFO"), file=settings.log_file,
                      max_bytes=settings.log_max_bytes, backups=settings.log_backups)
    logging.getLogger("aiokafka").setLevel(logging.WARNING)


@contextmanager
def correlated(**fields: Any) -> Iterator[None]:
    """Attach correlation fields to every log line written inside the block."""
    token = _correlation.set({**_correlation.get(), **{k: v for k, v in fields.items() if v}})
    try:
        yield
    finally:
        _correlation.reset(token)


def log_fields(**fields: Any) -> dict[str, Any]:
    """`logger.info("msg", extra=log_fields(pages=3))` adds structured fields to one line."""
    return {"fields": fields}
