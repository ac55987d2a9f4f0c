"""The HTTP gateway: uploads documents (PDF, DOCX, HTML, Markdown, text), publishes queries and returns their verified answers.

Stateless apart from the requests it is holding: any number of replicas run side by side.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import FastAPI, File, Form, HTTPException, Request, Response, UploadFile
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from faststream.kafka import Topic
from faststream.kafka.annotations import KafkaMessage
from pydantic import ValidationError

from services.gateway.answers import AnswerWaiter
from services.gateway.deletions import BackgroundDeletions
from services.gateway.auth import AUTHENTICATED, Caller, CallerDep, install_auth, require_admin
from services.gateway.errors import detail_text, install_validation_handler, invalid, shortened
from services.gateway.limits import install_body_limits
from services.gateway.outages import (
    CLIENT_TIMEOUT,
    UNAVAILABLE_RESPONSES,
    BackendUnavailable,
    PROBE_TIMEOUT_S,
    bounded,
    extend_deadline,
    install_outage_handling,
    unavailable_response,
)
from services.gateway.pagination import (
    DEFAULT_LIMIT,
    NEXT_CURSOR_HEADER,
    Cursor,
    Limit,
    decode_cursor,
    encode_cursor,
    link_next,
)
from services.gateway.readiness import readiness
from services.gateway.schemas import (
    DeletedOut,
    DocumentDetailOut,
    DocumentOut,
    FileUploadResult,
    PageOut,
    QUERY_TIMEOUT_MAX_S,
    QueryAccepted,
    QueryRequest,
    QueryResponse,
    UploadAccepted,
    UploadsAccepted,
    VerifyRequest,
    VerifyResponse,
)
from services.gateway.security import install_security
from services.gateway.stage_watch import QUERY_STAGES, LiveStages
from services.gateway.web import mount_web
from shared.adapters.blobs import make_blob_store
from shared.adapters.kafka.broker import Bus, make_broker
from shared.adapters.kafka.topics import ensure_topics
from shared.adapters.logs import correlated, log_fields
from shared.adapters.metrics import (
    HTTP_SECONDS,
    INFLIGHT_QUERIES,
    MESSAGES_CONSUMED,
    export_http_series,
    export_known_series,
    record_finished_query,
    render_metrics,
    start_metrics_server,
)
from shared.adapters.mongo.api_keys import MongoKeyStore
from shared.adapters.mongo.heartbeats import MongoHeartbeats
from shared.adapters.mongo.outbox import MongoOutbox
from shared.adapters.mongo.queries import MongoQueryRepository, QueryRecord, QueryStatus
from shared.adapters.mongo.store import MongoRepository, connect
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.nli import configured_judge
from shared.app.deletion import delete_document
from shared.app.indexing import decide_indexing
from shared.app.outbox import OutboxPublisher
from shared.app.verification import SourcePage, answer_confidence, verify_text
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import (
    AnswerVerified,
    DocumentUploaded,
    QueryFailed,
    QueryReceived,
)
from shared.model.file_names import FileNameError, ascii_fallback, file_name_label
from shared.model.formats import FILE_EXTENSIONS, MEDIA_TYPES, PDF_MAGIC, DocumentFormat, sniff_format
from shared.model.ids import BuilderChoice, document_id
from shared.model.query import QuerySettings
from shared.ports.repository import DocumentBeingDeleted
from shared.settings import Settings, get_settings

logger = logging.getLogger(__name__)

STAGE = "gateway"
READ_CHUNK = 1024 * 1024
MAX_FILES_PER_UPLOAD = 100


@dataclass
class Backends:
    repo: MongoRepository
    queries: MongoQueryRepository
    waiter: AnswerWaiter
    outbox: OutboxPublisher  # document events: never lost to a Kafka outage
    keys: MongoKeyStore
    heartbeats: MongoHeartbeats
    deletions: BackgroundDeletions
    stages: LiveStages


def query_outcome(finished: QueryRecord | None) -> str:
    """The outcome a finished query is counted under (`treerag_queries_total`)."""
    if finished is None:
        return "timeout"
    if finished.status == QueryStatus.FAILED or finished.outcome is None:
        return "failed"
    return "abstained" if finished.outcome.answer.abstained else "answered"


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    broker = make_broker(settings, STAGE)
    bus = Bus(broker, STAGE, settings.topic_prefix)
    backends: dict[str, Backends] = {}

    def b() -> Backends:
        if "live" not in backends:
            raise BackendUnavailable("the gateway", "is starting")
        return backends["live"]

    # Each replica reads every answer (own group, newest offsets) and resolves its own requests.
    listener = broker.subscriber(
        Topic(bus.topic(AnswerVerified.TOPIC), declare=False),
        Topic(bus.topic(QueryFailed.TOPIC), declare=False),
        group_id=f"{settings.topic_prefix}treerag-gateway-{uuid.uuid4().hex[:12]}",
        auto_offset_reset="latest",
        title="gateway:answers",
    )

    @listener
    async def on_answer(msg: KafkaMessage) -> None:
        topic = msg.raw_message.topic
        MESSAGES_CONSUMED.labels(STAGE, topic).inc()
        if "live" not in backends:
            return
        try:
            event = AnswerVerified.model_validate_json(msg.body) if topic == bus.topic(AnswerVerified.TOPIC) \
                else QueryFailed.model_validate_json(msg.body)
        except ValidationError:
            logger.warning("unreadable event ignored", extra=log_fields(topic=topic))
            return
        backends["live"].waiter.resolve(event)

    # The answers are read without the delivery layer (no handler, retries or dead letters).
    export_known_series(STAGE, produced=[bus.topic(DocumentUploaded.TOPIC), bus.topic(QueryReceived.TOPIC)])
    for topic in (AnswerVerified.TOPIC, QueryFailed.TOPIC):
        MESSAGES_CONSUMED.labels(STAGE, bus.topic(topic))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await ensure_topics(settings.kafka_bootstrap, settings.topic_partitions, prefix=settings.topic_prefix)
        # Fails a request over to 503 well within its budget when MongoDB is down.
        mongo = connect(settings.mongo_url, serverSelectionTimeoutMS=int(settings.request_timeout_s * 500))
        repo = MongoRepository(mongo, settings.mongo_db, owns_client=False,
                               blobs=make_blob_store(settings, mongo[settings.mongo_db]))
        queries = MongoQueryRepository(mongo, settings.mongo_db)
        outbox = MongoOutbox(mongo[settings.mongo_db])
        await repo.ensure_indexes()
        await queries.ensure_indexes()
        await outbox.ensure_indexes()
        publisher = OutboxPublisher(outbox, bus, send_timeout_s=settings.publish_timeout_s)
        # A query started before a deletion may store its result until its deadline has passed.
        deletions = BackgroundDeletions(repo, queries, late_writes_s=max(settings.query_timeout_s, QUERY_TIMEOUT_MAX_S))
        heartbeats = MongoHeartbeats(mongo[settings.mongo_db])
        backends["live"] = Backends(repo, queries, AnswerWaiter(queries), publisher,
                                    MongoKeyStore(mongo, settings.mongo_db), heartbeats, deletions,
                                    LiveStages(heartbeats, settings.heartbeat_ttl_s))
        if settings.metrics_port is not None:
            # Scrapers read this port (loopback unless TREERAG_METRICS_HOST), no key needed;
            # the API port's /metrics asks for an admin key like any other route.
            start_metrics_server(settings.metrics_port, addr=settings.metrics_host)
        await broker.start()
        relay = asyncio.create_task(publisher.run_relay(settings.outbox_relay_interval_s))
        deletions.resume()
        logger.info("gateway ready", extra=log_fields(kafka=settings.kafka_bootstrap, mongo_db=settings.mongo_db))
        try:
            yield
        finally:
            relay.cancel()
            await deletions.close()
            await broker.stop()
            backends.clear()
            await mongo.close()

    app = FastAPI(
        title="TreeRAG gateway",
        version="0.1.0",
        description="Upload PDFs, get page-aware section trees, ask questions and get answers with page citations.",
        lifespan=lifespan,
        responses=UNAVAILABLE_RESPONSES,
        # Every route: its client's timeout_s, then 401 without a key but the public ones.
        dependencies=[CLIENT_TIMEOUT, AUTHENTICATED],
        docs_url=None,  # served offline by the web app, with its assets from this origin
        redoc_url=None,
    )
    install_validation_handler(app)
    install_auth(app, settings, lambda: b().keys)
    install_body_limits(app, settings)
    def backend_probes() -> dict[str, Callable[[], Awaitable[Any]]]:
        live = backends.get("live")
        probes: dict[str, Callable[[], Awaitable[Any]]] = {"Kafka": lambda: broker.ping(timeout=PROBE_TIMEOUT_S)}
        if live is not None:
            probes["MongoDB"] = live.repo.ping
        return probes

    install_outage_handling(app, settings, backend_probes)
    mount_web(app, lambda: b().repo, settings.prometheus_url)

    @app.middleware("http")
    async def measure(request: Request, call_next: Any) -> Response:
        started = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            route = request.scope.get("route")
            path = getattr(route, "path", "unmatched")
            HTTP_SECONDS.labels(request.method, path, str(status)).observe(time.perf_counter() - started)

    install_security(app, settings)  # after `measure`: outermost, so its headers are on every response

    # ------------------------------------------------------------ health

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"], responses={503: {"description": "Not ready: `missing` names what is down."}})
    async def readyz() -> JSONResponse:
        """200 when MongoDB, Kafka and a live process of each required stage are there; 503 naming
        what is missing otherwise."""
        live = backends.get("live")
        ready, body = await readiness(settings, lambda: b().repo.ping(), lambda: broker.ping(timeout=3.0),
                                      live.heartbeats if live else None)
        return JSONResponse(body, status_code=200 if ready else 503)

    @app.get("/metrics", tags=["ops"], response_class=Response,
             responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
    async def metrics(caller: CallerDep) -> Response:
        require_admin(caller)
        body, content_type = render_metrics()
        return Response(body, media_type=content_type)

    # ------------------------------------------------------------ documents

    async def read_upload(file: UploadFile) -> tuple[bytes, DocumentFormat]:
        too_large = HTTPException(
            413, f"the file is larger than {settings.max_upload_bytes} bytes (TREERAG_MAX_UPLOAD_BYTES)"
        )
        if file.size is not None and file.size > settings.max_upload_bytes:
            raise too_large  # its spooled size says so: refused before it is read into memory
        chunks: list[bytes] = []
        size = 0
        while chunk := await file.read(READ_CHUNK):
            size += len(chunk)
            if size > settings.max_upload_bytes:
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

    async def accept(data: bytes, fmt: DocumentFormat, client_name: str | None, caller: Caller,
                     builder: BuilderChoice, rebuild: bool) -> UploadAccepted:
        """Store the file and owe its indexing request (see `upload`)."""
        doc_id = document_id(data, caller.tenant)
        try:
            file_name = file_name_label(client_name, fallback=f"{doc_id}{FILE_EXTENSIONS[fmt]}")
        except FileNameError as exc:
            raise invalid(("body", "file"), str(exc)) from exc
        live = b()
        with correlated(doc_id=doc_id):
            if await live.repo.being_deleted(doc_id):
                raise HTTPException(409, str(DocumentBeingDeleted(doc_id)))
            existing = await live.repo.get_document(doc_id)
            if existing is not None and existing.tenant != caller.tenant:
                raise HTTPException(409, "this id is taken by a document of another tenant; change the file and upload again")
            decision = decide_indexing(existing, builder, force=rebuild)
            if existing is not None and not decision.index:
                return UploadAccepted(doc_id=doc_id, status=existing.status, file_name=existing.file_name,
                                      duplicate=True)
            await live.repo.put_pdf(doc_id, data)
            event = DocumentUploaded(
                doc_id=doc_id, tenant=caller.tenant, file_name=file_name, size_bytes=len(data),
                pdf_ref=f"{live.repo.blobs.scheme}:{doc_id}", index_options={"builder": builder}, rebuild=decision.rebuild, format=fmt,
            )
            # Owed before the record says "uploaded": whatever fails next, the event goes out.
            await live.outbox.stage(event)
            record = (existing or DocumentRecord(doc_id=doc_id, file_name=file_name, format=fmt, tenant=caller.tenant))
            try:
                await live.repo.put_document(record.model_copy(update={"status": DocumentStatus.UPLOADED,
                                                                       "reason": None}))
            except DocumentBeingDeleted as exc:
                # Its deletion started meanwhile: the indexer drops the upload owed for it.
                raise HTTPException(409, str(exc)) from exc
            published = await live.outbox.send(event)
            logger.info("document uploaded", extra=log_fields(file_name=file_name, bytes=len(data),
                                                              published=published))
        return UploadAccepted(doc_id=doc_id, status=DocumentStatus.UPLOADED, file_name=file_name,
                              duplicate=existing is not None, published=published)

    async def accept_one(file: UploadFile, caller: Caller, builder: BuilderChoice, rebuild: bool) -> FileUploadResult:
        name = file.filename or ""
        try:
            data, fmt = await read_upload(file)
            document = await accept(data, fmt, file.filename, caller, builder, rebuild)
        except HTTPException as exc:
            return FileUploadResult(file_name=name, status_code=exc.status_code, error=detail_text(exc.detail))
        return FileUploadResult(file_name=name, status_code=202, document=document)

    @app.post(
        "/v1/documents", status_code=202, response_model=UploadAccepted | UploadsAccepted, tags=["documents"],
        responses={202: {"description": "`file`: the document; `files`: one result per file, each accepted or "
                                        "refused with the status and reason a one-file upload would get."}},
    )
    async def upload(
        caller: CallerDep,
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
            data, fmt = await read_upload(file)
            return await accept(data, fmt, file.filename, caller, builder, rebuild)
        batch = files or []
        if len(batch) > MAX_FILES_PER_UPLOAD:
            raise HTTPException(413, f"{len(batch)} files in one request; send at most {MAX_FILES_PER_UPLOAD}")
        results = [await accept_one(f, caller, builder, rebuild) for f in batch]
        accepted = sum(r.document is not None for r in results)
        return UploadsAccepted(files=results, accepted=accepted, refused=len(results) - accepted)

    @app.get("/v1/documents", response_model=list[DocumentOut], tags=["documents"],
             responses={200: {"headers": {NEXT_CURSOR_HEADER: {"description": "The next page's cursor, when "
                                                                             "there is one (also as Link rel=next)."}}}})
    async def list_documents(request: Request, response: Response, caller: CallerDep,
                             status: DocumentStatus | None = None, file_name: str | None = None,
                             limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> list[DocumentOut]:
        """The caller's tenant's documents, newest first, `limit` per page; the `X-Next-Cursor`
        header (and `Link: rel=next`) names the next page. `status` lists only documents in that
        state (a page may then hold fewer than `limit` while more follow). `file_name` lists, on
        one page, the documents uploaded under that name (a name is a label: several documents
        may share it)."""
        if file_name is not None:
            records = await b().repo.list_documents()
            return [DocumentOut.of(r) for r in records if r.tenant == caller.tenant
                    and r.file_name == file_name and (status is None or r.status == status)]
        filter_key = status.value if status is not None else ""
        page = await b().repo.list_page(caller.tenant, limit, decode_cursor(cursor, filter_key), status)
        next_cursor = encode_cursor(page.next_position, filter_key) if page.next_position is not None else None
        link_next(request, response, next_cursor)
        return [DocumentOut.of(r) for r in page.records]

    async def find(doc_id: str, caller: Caller) -> DocumentRecord:
        """Documents are addressed by id only: a file name is a label several documents may share.
        Another tenant's document is not found (404, never 403: its id says nothing)."""
        record = await b().repo.get_document(doc_id)
        if record is None or record.tenant != caller.tenant:
            raise HTTPException(
                404, f"no document with id {shortened(doc_id, 64)!r}; GET /v1/documents (?file_name=NAME) lists the ids"
            )
        return record

    @app.get("/v1/documents/{doc_id}", response_model=DocumentDetailOut, tags=["documents"])
    async def get_document(doc_id: str, caller: CallerDep) -> DocumentDetailOut:
        return DocumentDetailOut.of(await find(doc_id, caller))

    @app.get("/v1/documents/{doc_id}/tree", tags=["documents"])
    async def get_tree(doc_id: str, caller: CallerDep) -> dict[str, Any]:
        record = await find(doc_id, caller)
        tree = await b().repo.get_tree(record.doc_id)
        if tree is None:
            raise HTTPException(409, f"document {record.doc_id} has no tree yet (status {record.status.value})")
        return {"doc_id": record.doc_id, "file_name": record.file_name, "version": record.version,
                "builder": record.builder, "nodes": tree.model_dump(mode="json")["nodes"]}

    @app.get("/v1/documents/{doc_id}/pages/{number}", response_model=PageOut, tags=["documents"])
    async def get_page(doc_id: str, number: int, caller: CallerDep) -> PageOut:
        record = await find(doc_id, caller)
        text = await b().repo.get_page(record.doc_id, number)
        if text is None:
            raise HTTPException(404, f"document {record.doc_id} has no page {number} (it has {record.page_count})")
        return PageOut(doc_id=record.doc_id, page=number, text=text)

    @app.get("/v1/documents/{doc_id}/pdf", tags=["documents"], response_class=Response,
             responses={200: {"content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}}})
    async def get_pdf(doc_id: str, caller: CallerDep) -> Response:
        record = await find(doc_id, caller)
        data = await b().repo.get_pdf(record.doc_id)
        if data is None:
            raise HTTPException(404, f"the file of {record.doc_id} is not stored")
        # Headers are latin-1: an ASCII fallback name plus the RFC 6266 UTF-8 form.
        disposition = f"inline; filename=\"{ascii_fallback(record.file_name)}\"; filename*=UTF-8''{quote(record.file_name)}"
        return Response(data, media_type=MEDIA_TYPES[record.format], headers={"Content-Disposition": disposition})

    @app.delete("/v1/documents/{doc_id}", response_model=DeletedOut, tags=["documents"])
    async def delete(doc_id: str, caller: CallerDep) -> DeletedOut:
        """Once this answers, nothing serves the document (its routes answer 404, queries never
        use it); its file, pages, tree, vectors, cached answers and the stored queries asked over
        or citing it (`queries_removed`) are removed in the background within seconds, and the
        stages drop what they keep in memory."""
        await find(doc_id, caller)
        live = b()
        with correlated(doc_id=doc_id):
            deletion = await delete_document(doc_id, live.repo, live.queries, live.outbox, live.outbox.outbox)
            if deletion is not None:
                live.deletions.finish(doc_id)
        if deletion is None:
            raise HTTPException(404, f"no document with id {doc_id!r}; GET /v1/documents lists them")
        return DeletedOut(doc_id=doc_id, file_name=deletion.record.file_name,
                          queries_removed=deletion.queries_removed)

    # ------------------------------------------------------------ queries

    async def resolve_documents(keys: list[str], caller: Caller) -> list[str]:
        """Canonical doc ids of the named documents (all must be ready); [] means every document
        of the caller's tenant."""
        live = b()
        if not keys:
            records = await live.repo.list_documents()
            if not any(r.status == DocumentStatus.READY and r.tenant == caller.tenant for r in records):
                raise HTTPException(409, "no document is ready to ask over; upload a PDF first (POST /v1/documents)")
            return []
        doc_ids: list[str] = []
        for key in keys:
            record = await find(key, caller)
            if record.status != DocumentStatus.READY:
                detail = f"document {record.doc_id} is {record.status.value}"
                raise HTTPException(409, detail + (f": {record.reason}" if record.reason else "; retry when it is ready"))
            doc_ids.append(record.doc_id)
        return doc_ids

    def query_settings(req: QueryRequest) -> QuerySettings:
        # The request validated the settings within their bounds (422 otherwise): nothing that
        # reaches the bus can fail a stage for its values.
        return req.settings.model_copy(update={"mode": req.mode}) if req.mode else req.settings

    @app.post(
        "/v1/query",
        response_model=QueryResponse,
        responses={202: {"model": QueryAccepted}, 502: {"model": QueryResponse}, 504: {"model": QueryResponse}},
        tags=["queries"],
    )
    async def query(req: QueryRequest, caller: CallerDep) -> Any:
        started = time.perf_counter()
        timeout_s = req.timeout_s or settings.query_timeout_s
        extend_deadline(timeout_s)  # a 503 or 504 within the client's timeout, never later
        query_settings_ = query_settings(req)
        doc_ids = await resolve_documents(req.doc_ids, caller)
        live = b()
        query_id = uuid.uuid4().hex
        with correlated(query_id=query_id):
            if not req.run_async and (missing := await live.stages.missing(QUERY_STAGES)):
                # Nobody would answer it: refused now, not after the whole timeout. (An async
                # query is still accepted: it waits in Kafka for the stage to come back.)
                logger.warning("query refused: a stage has no live process", extra=log_fields(missing=missing))
                return unavailable_response(
                    "stage " + ", ".join(missing),
                    f"has no live process (no heartbeat within {settings.heartbeat_ttl_s:g} s)",
                    max(1, round(settings.retry_after_s)), query_id=query_id,
                )
            record = QueryRecord(query_id=query_id, question=req.question, doc_ids=doc_ids,
                                 settings=query_settings_, tenant=caller.tenant)
            # Past its deadline no stage works on the query any more: an overload drains. An
            # async query without an explicit timeout has no deadline (its client polls).
            deadline = None if req.run_async and not req.timeout_s else record.created_at + timedelta(seconds=timeout_s)
            event = QueryReceived(query_id=query_id, question=req.question, doc_ids=doc_ids,
                                  settings=query_settings_, tenant=caller.tenant, deadline=deadline)

            def publish() -> Awaitable[None]:
                remaining = timeout_s - (time.perf_counter() - started)
                return bounded(bus.publish(event), "Kafka", max(0.1, min(settings.publish_timeout_s, remaining)))

            if req.run_async:
                await asyncio.gather(live.queries.create(record), publish())
                return JSONResponse(QueryAccepted(query_id=query_id, status=QueryStatus.PENDING).model_dump(mode="json"),
                                    status_code=202)
            live.waiter.expect(query_id)
            INFLIGHT_QUERIES.inc()
            try:
                # The pending row is only for GET /v1/queries/{id}; the stages never read it, so
                # it is written while the query is already on its way.
                await asyncio.gather(live.queries.create(record), publish())
                finished = await live.waiter.wait(query_id, timeout_s - (time.perf_counter() - started))
            finally:
                live.waiter.forget(query_id)
                INFLIGHT_QUERIES.dec()
            total_ms = round((time.perf_counter() - started) * 1000, 3)
            record_finished_query(query_outcome(finished), finished.timings if finished else [])
            if finished is None:
                pending = QueryResponse.of(record, total_ms=total_ms)
                logger.warning("query timed out", extra=log_fields(total_ms=total_ms))
                return JSONResponse(pending.model_dump(mode="json"), status_code=504)
            if finished.status == QueryStatus.FAILED:
                finished = finished.with_request(record)  # a failure carries ids only
            response = QueryResponse.of(finished, total_ms=total_ms)
            logger.info("query answered", extra=log_fields(status=response.status.value, total_ms=total_ms))
            if finished.status == QueryStatus.FAILED:
                return JSONResponse(response.model_dump(mode="json"), status_code=502)
            return response

    @app.post("/v1/verify", response_model=VerifyResponse, tags=["queries"])
    async def verify(req: VerifyRequest, caller: CallerDep) -> VerifyResponse:
        """Checks any answer, sentence by sentence, against the stored pages it cites."""
        sources: list[SourcePage] = []
        for cited in req.citations:
            record = await find(cited.doc_id, caller)
            texts = await b().repo.get_page_texts(record.doc_id, sorted(set(cited.pages)))
            missing = sorted(set(cited.pages) - set(texts))
            if missing:
                raise HTTPException(404, f"document {record.doc_id} has no page {missing[0]} (it has {record.page_count})")
            sources.extend(SourcePage(record.doc_id, page, text) for page, text in sorted(texts.items()))
        checks = await asyncio.to_thread(verify_text, req.answer, sources, configured_judge(settings.nli),
                                        word_vectors(settings))
        counts = {v: sum(c.verdict == v for c in checks) for v in ("supported", "contradicted", "unsupported")}
        return VerifyResponse(sentences=checks, confidence=answer_confidence(checks), **counts)

    @app.get("/v1/queries/{query_id}", response_model=QueryResponse, tags=["queries"])
    async def get_query(query_id: str, caller: CallerDep) -> QueryResponse:
        record = await b().queries.get(query_id)
        if record is None or record.tenant != caller.tenant:
            raise HTTPException(404, f"no query {shortened(query_id, 64)!r}")
        return QueryResponse.of(record)

    export_http_series(declared_endpoints(app))
    return app


def declared_endpoints(app: FastAPI) -> list[tuple[str, str, int]]:
    """(method, route, status) of every API route: its success status, the statuses it declares,
    and 500 (any route can fail), so the latency and 5xx panels have series before traffic."""
    endpoints = []
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        statuses = {route.status_code or 200, 500, *(int(code) for code in route.responses if str(code).isdigit())}
        endpoints += [(method, route.path, status) for method in sorted(route.methods - {"HEAD"})
                      for status in sorted(statuses)]
    return endpoints
