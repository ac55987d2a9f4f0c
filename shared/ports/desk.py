"""What the tools for agents work on: the documents of one caller and the pipeline answering
over them. The gateway implements it over the bus and MongoDB (for the caller's tenant), the
CLI over the one-process store."""

from __future__ import annotations

from typing import Protocol

from shared.model.documents import DocumentRecord, DocumentTree
from shared.model.events import QueryOutcome
from shared.model.query import SentenceCheck
from shared.model.sources import SourcePage


class ToolFailure(RuntimeError):
    """A tool could not do what it was asked; the message says what to do instead."""


class DocumentDesk(Protocol):
    async def answer(self, question: str, doc_ids: list[str]) -> QueryOutcome:
        """The verified answer over `doc_ids` (empty: all documents); `ToolFailure` when none came."""
        ...

    async def documents(self) -> list[DocumentRecord]: ...

    async def document(self, doc_id: str) -> DocumentRecord:
        """`ToolFailure` when the caller has no such document."""
        ...

    async def page_texts(self, doc_id: str, pages: list[int]) -> dict[int, str]: ...

    async def tree(self, doc_id: str) -> DocumentTree | None: ...

    async def check(self, text: str, sources: list[SourcePage]) -> list[SentenceCheck]:
        """Each sentence of `text` checked against `sources` (`shared.app.desk.cited_sources`)."""
        ...

    def page_image(self, doc_id: str, page: int) -> str | None:
        """Where the page is rendered, when this desk serves images."""
        ...
