"""`POST /v1/documents`: one file or several, each stored and its indexing owed
(shared/app/uploads.py), or refused with the status and reason a one-file upload would get."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, UploadFile

from services.gateway.auth import Caller, CallerDep
from services.gateway.errors import KEYED, REFUSALS, detail_text, error_responses, invalid, refusal
from services.gateway.ports import Gateway, GatewayDep
from services.gateway.schemas import FileUploadResult, UploadAccepted, UploadsAccepted
from shared.adapters.logs import correlated
from shared.app.uploads import Upload, accept_upload
from shared.model.formats import PDF_MAGIC, DocumentFormat, sniff_format
from shared.model.ids import BuilderChoice, document_id

router = APIRouter(tags=["documents"], responses=error_responses(*KEYED))

READ_CHUNK = 1024 * 1024
MAX_FILES_PER_UPLOAD = 100


async def read_upload(file: UploadFile, max_bytes: int) -> tuple[bytes, DocumentFormat]:
    """The file's bytes and format; 413 past `max_bytes` (before reading it when its spooled
    size says so), 400 when empty, 415 when not a format the indexer reads."""
    too_large = HTTPException(413, f"the file is larger than {max_bytes} bytes (TREERAG_MAX_UPLOAD_BYTES)")
    if file.size is not None and file.size > max_bytes:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    while chunk := await file.read(READ_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise too_large
        chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        raise HTTPException(400, "the file is empty")
    fmt = sniff_format(data, file.filename or "", file.content_type)
    if fmt is None:
        raise HTTPException(
            415, f"not a supported document ({file.content_type or 'no content type'}, not PDF, DOCX, HTML, "
            "Markdown or text); upload one of these"
        )
    if fmt is DocumentFormat.PDF and PDF_MAGIC not in data[:1024]:
        raise HTTPException(415, "not a PDF file (no %PDF header); upload a PDF document")
    # Other files are read by the indexer, which reports a bad one with its reason.
    return data, fmt


async def accept(gateway: Gateway, file: UploadFile, caller: Caller, builder: BuilderChoice,
                 rebuild: bool) -> UploadAccepted:
    data, fmt = await read_upload(file, gateway.settings.max_upload_bytes)
    upload = Upload(data=data, format=fmt, client_name=file.filename, tenant=caller.tenant, builder=builder,
                    rebuild=rebuild, uploaded_by=caller.principal)
    with correlated(doc_id=document_id(data, caller.tenant)):
        accepted = await accept_upload(upload, gateway.documents, gateway.outbox, gateway.documents.blobs.scheme)
    return UploadAccepted(doc_id=accepted.doc_id, status=accepted.status, file_name=accepted.file_name,
                          duplicate=accepted.duplicate, published=accepted.published)


async def accept_one(gateway: Gateway, file: UploadFile, caller: Caller, builder: BuilderChoice,
                     rebuild: bool) -> FileUploadResult:
    name = file.filename or ""
    try:
        document = await accept(gateway, file, caller, builder, rebuild)
    except REFUSALS as exc:
        error = refusal(exc)
        return FileUploadResult(file_name=name, status_code=error.status_code, error=detail_text(error.detail))
    except HTTPException as exc:
        return FileUploadResult(file_name=name, status_code=exc.status_code, error=detail_text(exc.detail))
    return FileUploadResult(file_name=name, status_code=202, document=document)


@router.post(
    "/v1/documents", status_code=202, response_model=UploadAccepted | UploadsAccepted,
    responses={202: {"description": "`file`: the document; `files`: one result per file, each accepted or "
                                    "refused with the status and reason a one-file upload would get."},
               **error_responses(400, 409, 413, 415, 422, meanings={
                   400: "The multipart body does not parse, or the file is empty.",
                   409: "The document is being deleted, or its id is another tenant's.",
                   422: "No `file` (or `files`), a bad form field, or a file name with control characters or "
                        "longer than 255 characters."})},
)
async def upload_document(
    caller: CallerDep,
    gateway: GatewayDep,
    file: Annotated[UploadFile | None, File(description="A PDF, DOCX, HTML, Markdown or plain-text file.")] = None,
    files: Annotated[list[UploadFile] | None, File(description=f"Several files (up to {MAX_FILES_PER_UPLOAD}), "
                                                   "instead of `file`.")] = None,
    builder: Annotated[BuilderChoice, Form()] = "auto",
    rebuild: Annotated[bool, Form(description="Index again even when the document is ready.")] = False,
) -> UploadAccepted | UploadsAccepted:
    if (file is None) == (not files):
        raise invalid(("body", "file"), "send one file as `file`, or several as `files` (multipart/form-data)",
                      "missing")
    if file is not None:
        return await accept(gateway, file, caller, builder, rebuild)
    batch = files or []
    if len(batch) > MAX_FILES_PER_UPLOAD:
        raise HTTPException(413, f"{len(batch)} files in one request; send at most {MAX_FILES_PER_UPLOAD}")
    results = [await accept_one(gateway, f, caller, builder, rebuild) for f in batch]
    accepted = sum(r.document is not None for r in results)
    return UploadsAccepted(files=results, accepted=accepted, refused=len(results) - accepted)
