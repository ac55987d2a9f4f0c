"""The caller's documents: listing, one record, its tree, a page's text, the file, and deletion.

Documents are addressed by id only; another tenant's document is not found (shared/app/documents.py).
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request, Response

from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_responses
from services.gateway.pagination import (
    DEFAULT_LIMIT,
    NEXT_CURSOR_HEADER,
    Cursor,
    Limit,
    decode_cursor,
    encode_cursor,
    link_next,
)
from services.gateway.ports import GatewayDep
from services.gateway.roles import deletion_refusal
from services.gateway.schemas import DeletedOut, DocumentDetailOut, ListedDocumentOut, PageOut, TreeOut
from shared.adapters.logs import correlated
from shared.app.deletion import delete_document
from shared.app.documents import DocumentNotFound, tenant_document
from shared.model.documents import DocumentStatus
from shared.model.file_names import ascii_fallback
from shared.model.formats import MEDIA_TYPES

router = APIRouter(tags=["documents"], responses=error_responses(*KEYED))


@router.get("/v1/documents", response_model=list[ListedDocumentOut],
            responses={200: {"headers": {NEXT_CURSOR_HEADER: {"description": "The next page's cursor, when "
                                                                            "there is one (also as Link rel=next)."}}},
                       **error_responses(400, 422, meanings={
                           400: "The cursor is not one of ours, out of date, or made under another `status`."})})
async def list_documents(request: Request, response: Response, caller: CallerDep, gateway: GatewayDep,
                         status: DocumentStatus | None = None, file_name: str | None = None,
                         limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> list[ListedDocumentOut]:
    """The caller's tenant's documents, newest first, `limit` per page; the `X-Next-Cursor`
    header (and `Link: rel=next`) names the next page. `status` lists only documents in that
    state (a page may then hold fewer than `limit` while more follow). `file_name` lists, on
    one page, the documents uploaded under that name (a name is a label: several documents
    may share it). Each carries its card's short form: issuer, type and period."""
    if file_name is not None:
        records = await gateway.documents.list_documents()
        return [ListedDocumentOut.of(r) for r in records if r.tenant == caller.tenant
                and r.file_name == file_name and (status is None or r.status == status)]
    filter_key = status.value if status is not None else ""
    page = await gateway.documents.list_page(caller.tenant, limit, decode_cursor(cursor, filter_key), status)
    next_cursor = encode_cursor(page.next_position, filter_key) if page.next_position is not None else None
    link_next(request, response, next_cursor)
    return [ListedDocumentOut.of(r) for r in page.records]


@router.get("/v1/documents/{doc_id}", response_model=DocumentDetailOut, responses=error_responses(404))
async def get_document(doc_id: str, caller: CallerDep, gateway: GatewayDep) -> DocumentDetailOut:
    return DocumentDetailOut.of(await tenant_document(gateway.documents, doc_id, caller.tenant))


@router.get("/v1/documents/{doc_id}/tree", response_model=TreeOut,
            responses=error_responses(404, 409, meanings={409: "The document has no tree yet (not indexed, or its "
                                                               "indexing failed: `message` gives its status)."}))
async def get_tree(doc_id: str, caller: CallerDep, gateway: GatewayDep) -> TreeOut:
    record = await tenant_document(gateway.documents, doc_id, caller.tenant)
    tree = await gateway.documents.get_tree(record.doc_id)
    if tree is None:
        raise HTTPException(409, f"document {record.doc_id} has no tree yet (status {record.status.value})")
    return TreeOut(doc_id=record.doc_id, file_name=record.file_name, version=record.version, builder=record.builder,
                   nodes=tree.nodes)


@router.get("/v1/documents/{doc_id}/pages/{number}", response_model=PageOut, responses=error_responses(404, 422))
async def get_page(doc_id: str, number: int, caller: CallerDep, gateway: GatewayDep) -> PageOut:
    record = await tenant_document(gateway.documents, doc_id, caller.tenant)
    text = await gateway.documents.get_page(record.doc_id, number)
    if text is None:
        raise HTTPException(404, f"document {record.doc_id} has no page {number} (it has {record.page_count})")
    return PageOut(doc_id=record.doc_id, page=number, text=text)


@router.get("/v1/documents/{doc_id}/pdf", response_class=Response,
            responses={200: {"content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}},
                       **error_responses(404)})
async def get_pdf(doc_id: str, caller: CallerDep, gateway: GatewayDep) -> Response:
    record = await tenant_document(gateway.documents, doc_id, caller.tenant)
    data = await gateway.documents.get_pdf(record.doc_id)
    if data is None:
        raise HTTPException(404, f"the file of {record.doc_id} is not stored")
    # Headers are latin-1: an ASCII fallback name plus the RFC 6266 UTF-8 form.
    disposition = f"inline; filename=\"{ascii_fallback(record.file_name)}\"; filename*=UTF-8''{quote(record.file_name)}"
    return Response(data, media_type=MEDIA_TYPES[record.format], headers={"Content-Disposition": disposition})


@router.delete("/v1/documents/{doc_id}", response_model=DeletedOut, name="delete_document",
               responses=error_responses(403, 404, meanings={
                   403: "The caller's role is below editor, or an editor asked to delete a document they did not "
                        "upload (`message` says which).",
                   404: "No such document, or its deletion has started."}))
async def delete(doc_id: str, caller: CallerDep, gateway: GatewayDep) -> DeletedOut:
    """Once this answers, nothing serves the document (its routes answer 404, queries never
    use it); its file, pages, tree, vectors, page analysis, cached answers and the stored
    queries asked over or citing it (`queries_removed`) are removed in the background within
    seconds, and the stages drop what they keep in memory."""
    record = await tenant_document(gateway.documents, doc_id, caller.tenant)
    refused = deletion_refusal(caller.role, caller.principal, record.uploaded_by)
    if refused is not None:
        raise HTTPException(403, refused)
    with correlated(doc_id=doc_id):
        deletion = await delete_document(doc_id, gateway.documents, gateway.queries, gateway.outbox,
                                         gateway.outbox.outbox, keys=gateway.document_keys)
        if deletion is None:  # another request's deletion started first
            raise DocumentNotFound(doc_id)
        gateway.deleted.note(doc_id)  # before the call returns: no answer citing it is served from now
        gateway.deletions.finish(doc_id)
    return DeletedOut(doc_id=doc_id, file_name=deletion.record.file_name, queries_removed=deletion.queries_removed)
