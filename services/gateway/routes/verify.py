"""`POST /v1/verify`: any answer checked, sentence by sentence, against the stored pages it cites."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, HTTPException

from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_responses
from services.gateway.ports import GatewayDep
from services.gateway.schemas import VerifyRequest, VerifyResponse
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.nli import configured_judge
from shared.app.documents import tenant_document
from shared.app.verification import SourcePage, answer_confidence, verify_text

router = APIRouter(tags=["queries"], responses=error_responses(*KEYED))


@router.post("/v1/verify", response_model=VerifyResponse, responses=error_responses(404, 413, 422, meanings={
    404: "A cited document is not the caller's tenant's, or has no such page."}))
async def verify(req: VerifyRequest, caller: CallerDep, gateway: GatewayDep) -> VerifyResponse:
    """Checks any answer, sentence by sentence, against the stored pages it cites."""
    sources: list[SourcePage] = []
    for cited in req.citations:
        record = await tenant_document(gateway.documents, cited.doc_id, caller.tenant)
        texts = await gateway.documents.get_page_texts(record.doc_id, sorted(set(cited.pages)))
        missing = sorted(set(cited.pages) - set(texts))
        if missing:
            raise HTTPException(404, f"document {record.doc_id} has no page {missing[0]} (it has {record.page_count})")
        sources.extend(SourcePage(record.doc_id, page, text) for page, text in sorted(texts.items()))
    settings = gateway.settings
    checks = await asyncio.to_thread(verify_text, req.answer, sources, configured_judge(settings.nli),
                                     word_vectors(settings))
    counts = {v: sum(c.verdict == v for c in checks) for v in ("supported", "contradicted", "unsupported")}
    return VerifyResponse(sentences=checks, confidence=answer_confidence(checks), **counts)
