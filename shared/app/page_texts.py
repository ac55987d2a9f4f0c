"""Page texts read back from the store by the stages after the navigator.

The navigator's `nodes.selected` carries each whole page it selected as a reference (document,
tree version, page number; `Passage.whole_page`), not its text: Kafka retains a message and
cannot delete it, and the compressor can read the page where it is kept. The verifier reads the
pages it checks sentences against the same way, so no answer is checked against text an event
carried.

A tree version is written once (a rebuild gets a new version), so a stage reads a document's
pages from the store once per version and keeps them, up to a bound in characters.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from shared.model.delivery import PermanentError
from shared.model.documents import DocumentRecord
from shared.model.lru import Lru
from shared.model.query import Passage

logger = logging.getLogger(__name__)

# What one stage holds by default: about the text of 16,000 filing pages.
DEFAULT_MAX_CHARS = 64_000_000
# Document versions held at most, however short (the characters bound the memory).
MAX_VERSIONS = 4096


class PagesGone(PermanentError):
    """A page a message refers to is no longer in the store: its document was deleted while
    the query was under way. Asking again answers from what is stored now."""


class PageStore(Protocol):
    """What a stage reads of the store: a document's record and its page texts."""

    async def get_document(self, doc_id: str) -> DocumentRecord | None: ...

    async def get_documents(self, doc_ids: Sequence[str]) -> dict[str, DocumentRecord | None]: ...

    async def get_pages(self, doc_id: str) -> list[str]: ...

    async def get_page_texts(self, doc_id: str, numbers: list[int]) -> dict[int, str]: ...


class PageTextCache:
    """Page texts per (doc_id, tree version), kept in memory up to `max_chars` characters, the
    version asked longest ago dropped first (a document longer than the bound is read for each
    query that needs it)."""

    def __init__(self, repo: PageStore, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        self.repo = repo
        self._pages: Lru[tuple[str, int], list[str]] = Lru(
            MAX_VERSIONS, weight=lambda key, pages: sum(map(len, pages)), max_weight=max_chars)

    async def texts(self, tenant: str, doc_id: str, version: int | None, numbers: set[int]) -> dict[int, str]:
        return await self.texts_of(await self.repo.get_document(doc_id), tenant, doc_id, version, numbers)

    async def texts_of(self, record: DocumentRecord | None, tenant: str, doc_id: str, version: int | None,
                       numbers: set[int]) -> dict[int, str]:
        """The pages of one of the asking tenant's readable documents, with its record as just
        read by the caller (None: not found). Another tenant's document, or one whose deletion
        has started, has none."""
        if record is None or record.tenant != tenant:
            logger.warning("pages of another tenant's (or a deleted) document not read",
                           extra={"fields": {"doc_id": doc_id, "tenant": tenant}})
            return {}
        return await self.pages(doc_id, version, numbers)

    async def pages(self, doc_id: str, version: int | None, numbers: set[int]) -> dict[int, str]:
        """The pages of a document the caller already knows the tenant may read, by number
        (those that exist); without a version, read from the store and not kept."""
        if version is None:
            return await self.repo.get_page_texts(doc_id, sorted(numbers))
        key = (doc_id, version)
        pages = self._pages.get(key)
        if pages is None:
            pages = await self.repo.get_pages(doc_id)
            if pages:  # none: deleted meanwhile; asked again, not held empty
                self._pages.put(key, pages)
        return {n: pages[n - 1] for n in numbers if 1 <= n <= len(pages)}

    def __contains__(self, doc_id: str) -> bool:
        return any(key[0] == doc_id for key in self._pages)

    def forget(self, doc_id: str) -> int:
        """Drop every version of a deleted document's pages; how many versions were kept."""
        stale = [key for key in self._pages if key[0] == doc_id]
        for key in stale:
            self._pages.pop(key)
        return len(stale)


async def with_page_texts(passages: Sequence[Passage], documents: Sequence[tuple[str, int]],
                          cache: PageTextCache) -> list[Passage]:
    """`passages` with the text of each whole page that came as a reference read back from the
    store, at the version the navigator asked (`documents`), of those documents only. The
    navigator chose them for the query's tenant, and the verifier reads every record before it
    answers, so a document whose deletion has started answers nothing."""
    wanted: dict[str, set[int]] = {}
    for p in passages:
        if p.whole_page and not p.text and p.pages:
            wanted.setdefault(p.doc_id, set()).add(p.pages[0])
    if not wanted:
        return list(passages)
    versions = dict(documents)
    ordered = sorted(d for d in wanted if d in versions)  # another document's pages are not read
    found = await asyncio.gather(*(cache.pages(d, versions[d], wanted[d]) for d in ordered))
    texts = {(doc_id, n): text for doc_id, pages in zip(ordered, found, strict=True) for n, text in pages.items()}
    filled = []
    for p in passages:
        if p.whole_page and not p.text and p.pages:
            text = texts.get((p.doc_id, p.pages[0]))
            if text is None:
                raise PagesGone(f"page {p.pages[0]} of document {p.doc_id} is no longer stored: the document "
                                "was deleted while the query was under way; ask again")
            p = p.model_copy(update={"text": text})
        filled.append(p)
    return filled
