"""The navigator's per-document indexes, kept in memory per tree version.

Building a `DocumentIndex` reads a document's tree and every page: seconds for a large corpus.
The cache is warmed and invalidated from `tree.built` (and document deletions), so a query only
pays for an index that no event announced (a cold start, or a document indexed elsewhere).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import Protocol

import numpy as np

from services.navigator.index import DocumentIndex
from services.navigator.ranking.features import prepare_ranking
from services.navigator.stored_pages import StoredPages, load_pages
from services.navigator.warm_heap import freeze_warm_heap
from shared.adapters.logs import log_fields
from shared.model.documents import DocumentEmbeddings, DocumentRecord, DocumentStatus
from shared.model.ids import DEFAULT_TENANT
from shared.ports.model_roles import Embedder
from shared.ports.repository import IndexedDocuments
from shared.text.page_analysis import AnalysisFormatError, PageAnalysis
from shared.text.question import asked_text

logger = logging.getLogger(__name__)


class NoDocumentsError(LookupError):
    """Raised when there is nothing to ask over."""


class IndexSource(Protocol):
    """Where the navigator's handlers get document indexes: the store through `IndexCache`, or
    indexes already in memory (the evaluation harness)."""

    async def indexes(self, doc_ids: list[str] | None, tenant: str = DEFAULT_TENANT) -> list[DocumentIndex]: ...

    async def warm(self, doc_id: str) -> None: ...

    def forget(self, doc_id: str) -> None: ...


# What one navigator holds by default: 100,000 pages measured 3.3 GB resident once loaded, about
# 4.5 GB once every document has been shortlisted and its walk data derived (docs/deploy.md).
DEFAULT_MAX_PAGES = 100_000


def _size(index: DocumentIndex) -> int:
    return max(1, len(index.pages))


class IndexCache:
    """`embedder`: the model the documents' vectors were computed with; each index then carries
    them (`DocumentIndex.dense`) and `question_vector` embeds questions for them. At most
    `max_pages` pages of indexes are kept, the ones asked longest ago dropped first; the
    documents of the call in progress are never dropped by it. With `pages_on_use`, a document
    whose record vouches for its stored analysis gets its page texts read when a query first
    uses them (`StoredPages`), which only code running off the loop may do: the services' and
    the one-process engine's queries run in a worker thread."""

    def __init__(self, repository: IndexedDocuments, embedder: Embedder | None = None,
                 max_pages: int = DEFAULT_MAX_PAGES, pages_on_use: bool = False) -> None:
        if max_pages < 1:
            raise ValueError("max_pages must be at least 1 (TREERAG_NAVIGATOR_INDEX_CACHE_PAGES)")
        self.repository = repository
        self.embedder = embedder
        self.max_pages = max_pages
        self.pages_on_use = pages_on_use
        self._indexes: OrderedDict[str, DocumentIndex] = OrderedDict()
        self._pages = 0
        # Seconds spent reading documents from the store and building their indexes, in all.
        self.load_seconds = 0.0
        self._unfrozen = False  # indexes built since the heap was last frozen

    def question_vector(self, question: str) -> np.ndarray | None:
        """The question's unit vector for `DocumentIndex.dense_*_scores`; None without an embedder."""
        return self.embedder.embed([asked_text(question)])[0] if self.embedder is not None else None

    async def _embeddings(self, record: DocumentRecord) -> DocumentEmbeddings | None:
        """The document's stored vectors when they come from the configured model."""
        if self.embedder is None:
            return None
        embeddings = await self.repository.get_embeddings(record.doc_id)
        if embeddings is not None and embeddings.model != self.embedder.name:
            logger.warning(
                "stored vectors come from another model; ignored (re-index to use them)",
                extra=log_fields(doc_id=record.doc_id, stored=embeddings.model, configured=self.embedder.name),
            )
            return None
        return embeddings

    async def _stored_analysis(self, record: DocumentRecord) -> PageAnalysis | None:
        """The page analysis stored with the document under these text rules; None to compute
        it from the pages (logged: re-indexing stores one)."""
        data = await self.repository.get_analysis(record.doc_id)
        if data is None:
            logger.info("no stored page analysis; computed from the pages (re-index to store one)",
                        extra=log_fields(doc_id=record.doc_id))
            return None
        try:
            return PageAnalysis.from_bytes(data)
        except AnalysisFormatError as exc:
            logger.warning("stored page analysis not used; computed from the pages (re-index to store a new one)",
                           extra=log_fields(doc_id=record.doc_id, reason=str(exc)))
            return None

    def _analysis(self, record: DocumentRecord, analysis: PageAnalysis | None, pages: list[str]) -> PageAnalysis | None:
        """`analysis` when it describes these pages; None to compute it from them."""
        if analysis is None:
            return None
        if not analysis.describes(pages):
            logger.warning("stored page analysis is of other page text; computed from the pages",
                           extra=log_fields(doc_id=record.doc_id, analysed=analysis.page_count, pages=len(pages)))
            return None
        return analysis

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._indexes

    @property
    def pages_held(self) -> int:
        return self._pages

    def _keep(self, doc_id: str, index: DocumentIndex) -> None:
        old = self._indexes.pop(doc_id, None)
        if old is not None:
            self._pages -= _size(old)
        self._indexes[doc_id] = index
        self._pages += _size(index)

    def _shrink(self, in_use: Collection[str]) -> None:
        """Drop the indexes asked longest ago, sparing `in_use`, until the bound holds."""
        if self._pages <= self.max_pages:
            return  # every query passes here: under the bound it costs no walk of the cache
        for doc_id in list(self._indexes):
            if self._pages <= self.max_pages:
                return
            if doc_id not in in_use:
                self._pages -= _size(self._indexes.pop(doc_id))
                logger.info("index dropped from memory (TREERAG_NAVIGATOR_INDEX_CACHE_PAGES)",
                            extra=log_fields(doc_id=doc_id, pages_held=self._pages))

    async def index(self, record: DocumentRecord) -> DocumentIndex:
        """The record's index at its version, built from the store when not cached."""
        index = await self._index(record)
        self._shrink({record.doc_id})
        self._freeze()
        return index

    async def _index(self, record: DocumentRecord) -> DocumentIndex:
        cached = self._indexes.get(record.doc_id)
        if cached is not None and cached.record.version == record.version:
            self._indexes.move_to_end(record.doc_id)
            return cached
        started = time.perf_counter()
        tree = await self.repository.get_tree(record.doc_id)
        if tree is None:
            raise NoDocumentsError(f"document {record.doc_id} ({record.file_name}) has no tree; re-index it")
        stored = await self._stored_analysis(record)
        pages: Sequence[str]
        if self.pages_on_use and stored is not None and stored.of_pages(record.page_count, record.pages_digest):
            # The reader holds the store, not this cache: an index holding its cache would make
            # a cycle, and a frozen heap (`warm_heap`) is out of the collector's reach.
            pages = StoredPages(record.doc_id, record.page_count, record.pages_digest,
                                functools.partial(self.repository.get_pages, record.doc_id), asyncio.get_running_loop())
            analysis: PageAnalysis | None = stored
        else:
            pages = await self.repository.get_pages(record.doc_id)
            analysis = self._analysis(record, stored, pages)
        # What only a shortlisted document's walk reads is derived on first use: a query over
        # a whole store shortlists a few documents, and a cold start would otherwise prepare
        # every one of them before answering (`warm` prepares ahead of the queries).
        index = DocumentIndex.build(record, tree, pages, embeddings=await self._embeddings(record), analysis=analysis)
        current = self._indexes.get(record.doc_id)
        # An older version is stale once a newer tree is indexed; a late build of an older
        # version never replaces a newer one.
        if current is None or current.record.version <= record.version:
            self._keep(record.doc_id, index)
        self._unfrozen = True
        self.load_seconds += time.perf_counter() - started
        return index

    def _freeze(self) -> None:
        """The indexes built since the last call live on: no collection walks them again (once
        per call that built any, not once per index: each freeze collects first)."""
        if self._unfrozen:
            started = time.perf_counter()
            freeze_warm_heap()
            self._unfrozen = False
            self.load_seconds += time.perf_counter() - started

    async def warm(self, doc_id: str) -> None:
        """Build the index of a document that was just indexed (from `tree.built`), with what
        its queries derive on first use derived now."""
        record = await self.repository.get_document(doc_id)
        if record is None or record.status != DocumentStatus.READY:
            return
        index = await self.index(record)
        await load_pages(index.pages)  # the preparation reads them, here on the loop
        prepare_ranking(index, self.embedder)
        freeze_warm_heap()  # and what the preparation derived
        logger.info("index warmed", extra=log_fields(doc_id=doc_id, version=record.version))

    def forget(self, doc_id: str) -> None:
        """Drop a deleted or rebuilt document's index."""
        dropped = self._indexes.pop(doc_id, None)
        if dropped is not None:
            self._pages -= _size(dropped)

    async def records(self, doc_ids: list[str] | None, tenant: str = DEFAULT_TENANT) -> list[DocumentRecord]:
        """The ready documents of `tenant` named by `doc_ids` (ids, unique id prefixes or file
        names), or all of them. Another tenant's document is not found, whatever the query names."""
        if doc_ids:
            records = []
            for key in doc_ids:
                record = await self.repository.find_document(key)
                if record is None or record.tenant != tenant:
                    raise NoDocumentsError(
                        f"no document matches {key!r}; use a doc id, a unique id prefix or a file name "
                        "(`treerag tree` with no argument lists them)"
                    )
                records.append(record)
        else:
            records = await self.repository.ready_documents(tenant)
        ready = [r for r in records if r.status == DocumentStatus.READY]
        if not ready:
            raise NoDocumentsError("no indexed document to ask over; run `treerag index FILE.pdf` first")
        return sorted(ready, key=lambda r: r.doc_id)

    async def indexes(self, doc_ids: list[str] | None, tenant: str = DEFAULT_TENANT) -> list[DocumentIndex]:
        records = await self.records(doc_ids, tenant)
        found = [await self._index(record) for record in records]
        self._shrink({record.doc_id for record in records})
        self._freeze()
        return found
