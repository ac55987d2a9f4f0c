"""Conversations: `POST /v1/chats` opens a thread, `POST /v1/chats/{id}/messages` asks within
it (a follow-up is completed from the turn before it, and the completed question is returned
with the answer), `GET` lists threads and turns, `DELETE` removes a thread.

Threads are the tenant's: another tenant's is not found. A thread goes when a document it was
asked over or cites is deleted (its answers quote it).
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse

from services.gateway.asking import Question, StagesMissing, ask
from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_responses
from services.gateway.outages import extend_deadline
from services.gateway.ports import GatewayDep
from services.gateway.routes.queries import ASKING_ERRORS, stages_missing
from services.gateway.schemas import ChatCreate, ChatMessage
from services.gateway.streaming import EVENT_STREAM, stream, wants_events
from shared.adapters.logs import correlated, log_fields
from shared.app.chats import ChatNotFound, next_turn, tenant_chat
from shared.app.documents import query_documents, tenant_document
from shared.model.chats import ChatThread, ChatTurn
from shared.model.query import QuerySettings
from shared.model.query_records import QueryStatus

logger = logging.getLogger(__name__)

router = APIRouter(tags=["chats"], responses=error_responses(*KEYED))

TURN_STATUS = {QueryStatus.ANSWERED: 200, QueryStatus.FAILED: 502, QueryStatus.PENDING: 504}


@router.post("/v1/chats", response_model=ChatThread, status_code=201,
             responses=error_responses(404, 413, 422, meanings={404: "A document it names is not the caller's "
                                                                     "tenant's."}))
async def create_chat(body: ChatCreate, caller: CallerDep, gateway: GatewayDep) -> ChatThread:
    doc_ids = [(await tenant_document(gateway.documents, doc_id, caller.tenant)).doc_id for doc_id in body.doc_ids]
    thread = ChatThread(chat_id=uuid.uuid4().hex, tenant=caller.tenant, title=body.title, doc_ids=doc_ids)
    await gateway.chats.create(thread)
    return thread


@router.get("/v1/chats", response_model=list[ChatThread], responses=error_responses(422))
async def list_chats(caller: CallerDep, gateway: GatewayDep,
                     limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[ChatThread]:
    """The caller's tenant's chats, the most recently active first."""
    return await gateway.chats.recent(caller.tenant, limit)


@router.get("/v1/chats/{chat_id}", response_model=ChatThread, responses=error_responses(404))
async def get_chat(chat_id: str, caller: CallerDep, gateway: GatewayDep) -> ChatThread:
    return await tenant_chat(gateway.chats, chat_id, caller.tenant)


@router.get("/v1/chats/{chat_id}/messages", response_model=list[ChatTurn], responses=error_responses(404, 422))
async def list_turns(chat_id: str, caller: CallerDep, gateway: GatewayDep,
                     last: Annotated[int | None, Query(ge=1, le=1000, description="Only the last N turns.")] = None,
                     ) -> list[ChatTurn]:
    thread = await tenant_chat(gateway.chats, chat_id, caller.tenant)
    return await gateway.chats.turns(thread.chat_id, last)


@router.post("/v1/chats/{chat_id}/messages", response_model=ChatTurn,
             responses={200: {"content": {EVENT_STREAM: {}}, "description": "The turn; with `Accept: "
                              "text/event-stream`, events: accepted (with the completed question), routed, one "
                              "sentence per answer sentence as soon as it is checked, then turn (or error)."},
                        502: {"model": ChatTurn}, 504: {"model": ChatTurn},
                        **ASKING_ERRORS, **error_responses(404, 409, meanings={
                            404: "No such chat for the caller's tenant, or a document it is over is gone.",
                            409: "The thread holds 500 turns (start a new one), or a document it is over is not "
                                 "ready, or none is."})})
async def ask_in_chat(chat_id: str, body: ChatMessage, request: Request, caller: CallerDep,
                      gateway: GatewayDep) -> Any:
    """The turn: the question as asked, the `standalone` question the documents were asked (a
    follow-up completed from the turn before it, with `rewrite_reason`), the answer, its
    citations and each sentence's verdict. 502 when the pipeline failed, 504 when no answer
    came within `timeout_s` (the turn is kept either way)."""
    started = time.perf_counter()
    timeout_s = body.timeout_s or gateway.settings.query_timeout_s
    extend_deadline(timeout_s)
    thread = await tenant_chat(gateway.chats, chat_id, caller.tenant)
    planned = await next_turn(gateway.chats, thread, body.question, gateway.follow_ups)
    doc_ids = await query_documents(gateway.documents, planned.doc_ids, caller.tenant)
    settings = QuerySettings(mode=body.mode) if body.mode else QuerySettings()
    question = Question(text=planned.rewrite.question, doc_ids=doc_ids, settings=settings,
                        tenant=caller.tenant, timeout_s=timeout_s, progress=wants_events(request), started=started)

    async def answered() -> ChatTurn:
        with correlated(query_id=question.query_id, chat_id=thread.chat_id):
            pending, finished = await ask(gateway, question)
            turn = ChatTurn.of(thread.chat_id, thread.turns + 1, body.question, planned.rewrite.question,
                               planned.rewrite.reason, finished or pending)
            if not await gateway.chats.add_turn(turn):
                raise ChatNotFound(chat_id)  # deleted while the question was being answered
            logger.info("chat turn", extra=log_fields(status=turn.status.value, rewritten=planned.rewrite.rewritten))
            return turn

    if wants_events(request):
        async def outcome() -> tuple[int, dict[str, Any]]:
            turn = await answered()
            return TURN_STATUS[turn.status], turn.model_dump(mode="json")

        accepted = {"query_id": question.query_id, "question": body.question, "standalone": planned.rewrite.question,
                    "rewrite_reason": planned.rewrite.reason, "doc_ids": doc_ids}
        return stream(accepted, outcome, final="turn", progress=gateway.progress, finish_on_leave=True)
    try:
        turn = await answered()
    except StagesMissing as exc:
        return stages_missing(gateway, exc)
    status = TURN_STATUS[turn.status]
    return turn if status == 200 else JSONResponse(turn.model_dump(mode="json"), status_code=status)


@router.delete("/v1/chats/{chat_id}", status_code=204, responses=error_responses(404))
async def delete_chat(chat_id: str, caller: CallerDep, gateway: GatewayDep) -> None:
    thread = await tenant_chat(gateway.chats, chat_id, caller.tenant)
    if not await gateway.chats.delete(thread.chat_id):
        raise HTTPException(404, f"no chat {chat_id!r}")
