"""Which documents a model call's prompt is made from, so that the replies kept of it go with them.

A stage wraps the model calls it makes over some documents in `made_from(doc_ids)`; the reply
cache stores what those calls return under the ids, and deleting any of the documents drops the
replies (a reply quotes the text it was given). The ids are context-local: they follow a call into
`asyncio.to_thread`, and into a pool thread given `contextvars.copy_context().run`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_MADE_FROM: ContextVar[tuple[str, ...]] = ContextVar("model_calls_made_from", default=())


@contextmanager
def made_from(doc_ids: Iterable[str]) -> Iterator[None]:
    """Model calls inside are made from `doc_ids` (added to any ids an outer block named)."""
    ids = tuple(dict.fromkeys((*_MADE_FROM.get(), *doc_ids)))
    token = _MADE_FROM.set(ids)
    try:
        yield
    finally:
        _MADE_FROM.reset(token)


def current_sources() -> tuple[str, ...]:
    """The documents the model calls made now are made from; () outside any `made_from`."""
    return _MADE_FROM.get()
