"""The tools' desk over the one-process store: the same stage handlers `treerag ask` answers
through, on an embedded store folder (`treerag mcp`, `treerag chat`)."""

from __future__ import annotations

import asyncio

from services.navigator.index_cache import NoDocumentsError
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.nli import configured_judge
from shared.app.verification import SourcePage, verify_text
from shared.model.documents import DocumentRecord, DocumentTree
from shared.model.events import QueryOutcome
from shared.model.query import QuerySettings, SentenceCheck
from shared.ports.desk import ToolFailure
from shared.ports.repository import IndexedDocuments
from shared.settings import get_settings
from treerag.engine import QueryEngine, QueryFailedError


class StoreDesk:
    def __init__(self, repository: IndexedDocuments, engine: QueryEngine) -> None:
        self.repository = repository
        self.engine = engine

    async def answer(self, question: str, doc_ids: list[str]) -> QueryOutcome:
        try:
            result = await self.engine.ask(question, doc_ids or None, QuerySettings())
        except NoDocumentsError as exc:
            raise ToolFailure(f"{exc}; list_documents gives the doc ids") from exc
        except (QueryFailedError, ValueError) as exc:
            raise ToolFailure(str(exc)) from exc
        return QueryOutcome(answer=result.answer, mode=result.mode, mode_reason=result.mode_reason,
                            stats=result.stats, tokens_before=result.tokens_before, tokens_after=result.tokens_after,
                            warnings=result.warnings, path=result.path)

    async def documents(self) -> list[DocumentRecord]:
        return await self.repository.list_documents()

    async def document(self, doc_id: str) -> DocumentRecord:
        record = await self.repository.get_document(doc_id) or await self.repository.find_document(doc_id)
        if record is None:
            raise ToolFailure(f"no document {doc_id[:200]!r} in this store; list_documents gives the doc ids")
        return record

    async def page_texts(self, doc_id: str, pages: list[int]) -> dict[int, str]:
        return await self.repository.get_page_texts(doc_id, pages)

    async def tree(self, doc_id: str) -> DocumentTree | None:
        return await self.repository.get_tree(doc_id)

    async def check(self, text: str, sources: list[SourcePage]) -> list[SentenceCheck]:
        settings = get_settings()
        return await asyncio.to_thread(verify_text, text, sources, configured_judge(settings.nli),
                                       word_vectors(settings))

    def page_image(self, doc_id: str, page: int) -> str | None:
        return None  # a local store serves no images; the gateway's desk links them
