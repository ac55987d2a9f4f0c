"""Structured JSON logs with correlation fields (doc_id, query_id, event_id) carried by context."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

_correlation: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "treerag_correlation", default={}
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
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(level: str = "INFO", stream: Any = None) -> None:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


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
