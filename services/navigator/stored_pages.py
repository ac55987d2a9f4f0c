"""A document's page texts read from the store when a query first needs them.

Routing a question over a whole store reads each document's page analysis (its terms), never
its text; only the few documents a query shortlists are walked, quoted and checked for literals.
So an index whose stored analysis is known to describe the stored pages (the record carries the
pages' digest, written with them) holds `StoredPages` instead of the texts: a cold start reads
no page text, and a document nobody asks about never has its text in memory.

The texts are read on the event loop the index was built on, from the worker thread a query
runs in (`navigate` runs in one), or ahead with `load()` on the loop itself.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any, overload

from shared.text.page_analysis import pages_digest

# The longest a query waits for a document's page texts from the store.
READ_TIMEOUT_S = 60.0


class PagesChanged(RuntimeError):
    """The stored pages are no longer those the index was built on (the document was indexed
    again meanwhile); asking again uses the new index (a redelivery does, as its records are
    read again)."""


class StoredPages(Sequence[str]):
    def __init__(self, doc_id: str, count: int, digest: str, read: Callable[[], Coroutine[Any, Any, list[str]]],
                 loop: asyncio.AbstractEventLoop) -> None:
        self.doc_id = doc_id
        self._count = count
        self._digest = digest
        self._read = read
        self._loop = loop
        self._lock = threading.Lock()
        self._texts: list[str] | None = None

    @property
    def loaded(self) -> bool:
        return self._texts is not None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._loaded()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    async def load(self) -> None:
        """Read the texts now, on the loop (before sync code on the loop uses them)."""
        if self._texts is None:
            self._keep(await self._read())

    def _loaded(self) -> list[str]:
        if self._texts is not None:
            return self._texts
        with self._lock:
            if self._texts is None:
                try:
                    running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
                except RuntimeError:
                    running = None
                if running is self._loop:
                    raise RuntimeError(f"the pages of {self.doc_id} were used on the event loop before being read: "
                                       "await `StoredPages.load()` first")
                self._keep(asyncio.run_coroutine_threadsafe(self._read(), self._loop).result(READ_TIMEOUT_S))
        assert self._texts is not None
        return self._texts

    def _keep(self, texts: list[str]) -> None:
        if len(texts) != self._count or pages_digest(texts) != self._digest:
            raise PagesChanged(f"the pages of {self.doc_id} changed since its index was built; ask again")
        self._texts = texts


async def load_pages(pages: Sequence[str]) -> None:
    """Make `pages` readable on the loop: stored pages are read now, texts in memory already are."""
    if isinstance(pages, StoredPages):
        await pages.load()
