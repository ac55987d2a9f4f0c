"""The page image and evidence box endpoints the page viewer reads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Protocol

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path, Query, Request, Response

from services.gateway.auth import Caller, CallerDep
from services.gateway.errors import KEYED, error_responses, shortened
from services.gateway.web.cache import ByteBoundedCache
from services.gateway.web.rendering import (
    MAX_SCALE,
    EvidenceBoxes,
    PageNotFound,
    TextLayer,
    UnreadablePdf,
    evidence_boxes,
    evidence_in_layer,
    render_page,
    text_layer,
)
from shared.model.documents import DocumentRecord
from shared.model.formats import FORMAT_NAMES, DocumentFormat

DEFAULT_SCALE = 1.5
# A viewer asks for the page as many pixels wide as it shows it (its CSS width times the
# device's pixel ratio); wider than this is beyond any screen and is refused.
MAX_WIDTH_PX = 8_000
EVIDENCE_MAX_CHARS = 4_000
# Rendered pages (a page is 100-500 KB at the default scale) and the PDFs they come from (one
# read from the store per document instead of one per page turned).
IMAGE_CACHE_BYTES = 64 * 1024 * 1024
PDF_CACHE_BYTES = 128 * 1024 * 1024


class DocumentSource(Protocol):
    async def get_document(self, doc_id: str) -> DocumentRecord | None: ...

    async def get_pdf(self, doc_id: str) -> bytes | None: ...

    async def get_text_layer(self, doc_id: str, page: int) -> TextLayer | None: ...


PageNumber = Annotated[int, Path(ge=1, le=1_000_000, description="1-based page number.")]


class PageFiles:
    """The PDFs behind the page routes, and their rendered pages, kept within a byte budget.
    `source()` gives the document store (it raises 503 while the gateway is starting)."""

    def __init__(self, source: Callable[[], DocumentSource]) -> None:
        self.source = source
        self.images = ByteBoundedCache(IMAGE_CACHE_BYTES)
        self.pdfs = ByteBoundedCache(PDF_CACHE_BYTES)

    async def pdf_of(self, doc_id: str, who: Caller) -> tuple[DocumentRecord, bytes]:
        """Another tenant's document is not found (404), as on every document route."""
        store = self.source()
        record = await store.get_document(doc_id)
        if record is None or record.tenant != who.tenant:
            raise HTTPException(404, f"no document with id {shortened(doc_id, 64)!r}; GET /v1/documents lists the ids")
        if record.format is not DocumentFormat.PDF:
            raise HTTPException(
                409, f"document {record.doc_id} is a {FORMAT_NAMES[record.format]} file: its pages are text with no "
                f"image; GET /v1/documents/{record.doc_id}/pages/N gives the text of page N",
            )
        # Doc ids are content hashes: the bytes of an id never change, so they can be kept.
        data = self.pdfs.get(record.doc_id)
        if data is None:
            data = await store.get_pdf(record.doc_id)
            if data is None:
                raise HTTPException(404, f"the PDF of {record.doc_id} is not stored")
            self.pdfs.put(record.doc_id, data)
        return record, data


def page_files(request: Request) -> PageFiles:
    files: PageFiles = request.app.state.page_files
    return files


Files = Annotated[PageFiles, Depends(page_files)]


def refused(exc: Exception) -> HTTPException:
    if isinstance(exc, PageNotFound):
        return HTTPException(404, str(exc))
    return HTTPException(409, f"{exc}; upload the document again")


router = APIRouter(tags=["documents"], responses=error_responses(*KEYED, 404, 409, 422, meanings={
    404: "No such document or page for the caller's tenant, or its file is not stored.",
    409: "The document is not a PDF (its pages are text with no image), or its PDF cannot be read.",
}))


def install_page_routes(app: FastAPI, source: Callable[[], DocumentSource]) -> None:
    """The page image, evidence box and text layer routes, over the documents `source()` gives."""
    app.state.page_files = PageFiles(source)
    app.include_router(router)


@router.get(
    "/v1/documents/{doc_id}/pages/{number}/image",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}}},
    summary="The page rendered as PNG",
)
async def get_page_image(
    doc_id: str,
    number: PageNumber,
    who: CallerDep,
    files: Files,
    scale: Annotated[float, Query(gt=0, le=MAX_SCALE, description="1 = 72 dpi; large pages are rendered smaller.")]
    = DEFAULT_SCALE,
    width: Annotated[int | None, Query(ge=1, le=MAX_WIDTH_PX, description=(
        "Pixels wide, instead of `scale`: a viewer asks for the width it shows the page at times the "
        "device's pixel ratio. The scale it implies is held to the same bounds as `scale`."))] = None,
) -> Response:
    record, data = await files.pdf_of(doc_id, who)
    key = (record.doc_id, number, ("width", width) if width is not None else round(scale, 3))
    png = files.images.get(key)
    if png is None:
        try:
            rendered = await asyncio.to_thread(render_page, data, number, scale, width)
        except (PageNotFound, UnreadablePdf) as exc:
            raise refused(exc) from exc
        png = rendered.png
        files.images.put(key, png)
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})


@router.get("/v1/documents/{doc_id}/pages/{number}/boxes", response_model=EvidenceBoxes,
            summary="Where a text is on the page, as boxes to highlight")
async def get_page_boxes(
    doc_id: str,
    number: PageNumber,
    text: Annotated[str, Query(min_length=1, max_length=EVIDENCE_MAX_CHARS,
                               description="The evidence, e.g. a cited answer sentence.")],
    who: CallerDep,
    files: Files,
) -> EvidenceBoxes:
    record, data = await files.pdf_of(doc_id, who)
    try:
        found = await asyncio.to_thread(evidence_boxes, data, number, text)
    except (PageNotFound, UnreadablePdf) as exc:
        raise refused(exc) from exc
    if found.match == "none":  # a page recognised by OCR has its words in the store, not the PDF
        recognised = await files.source().get_text_layer(record.doc_id, number)
        if recognised is not None:
            return evidence_in_layer(recognised, text)
    return found


@router.get("/v1/documents/{doc_id}/pages/{number}/text-layer", response_model=TextLayer,
            summary="The page's printed text with positions, to lay over the image")
async def get_page_text_layer(doc_id: str, number: PageNumber, who: CallerDep, files: Files) -> TextLayer:
    record, data = await files.pdf_of(doc_id, who)
    try:
        layer = await asyncio.to_thread(text_layer, data, number)
    except (PageNotFound, UnreadablePdf) as exc:
        raise refused(exc) from exc
    if not layer.lines:  # a scanned page: the words OCR read, where it read them
        recognised = await files.source().get_text_layer(record.doc_id, number)
        if recognised is not None:
            return recognised
    return layer
