"""The OpenAI-compatible doors: `GET /v1/models` and `POST /v1/chat/completions`, streamed or not.

A client written for OpenAI's API (its SDKs, Open WebUI, LangChain…) asks the documents through
the same pipeline as `POST /v1/query`. The `model` names the documents: `treerag` for all of the
tenant's, `treerag/<doc_id>` for one. The conversation in `messages` is carried as the chats
carry it: the last user message is completed from the ones before it (shared/text/followups.py).

The reply is an ordinary assistant message whose sentences end in `[file, p. N]` markers; the
citations, each sentence's verdict and its evidence offsets travel in the extra field
`treerag` (on the completion, and on a stream's last chunk), which the SDKs pass through.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from services.gateway.asking import Question, StagesMissing, ask
from services.gateway.auth import CallerDep
from services.gateway.errors import KEYED, error_response, error_responses, invalid
from services.gateway.outages import BackendUnavailable, extend_deadline
from services.gateway.ports import Gateway, GatewayDep
from services.gateway.routes.queries import ASKING_ERRORS, stages_missing
from services.gateway.schemas import QUERY_TIMEOUT_MAX_S
from services.gateway.streaming import InOrder, heard
from shared.app.documents import query_documents, tenant_document
from shared.model.documents import DocumentStatus
from shared.model.query import QUESTION_MAX_CHARS, Citation, QuerySettings, SentenceCheck
from shared.model.query_records import QueryRecord, QueryStatus
from shared.ports.model_roles import FollowUpWriter
from shared.text.followups import Rewrite, standalone

# Errors come in OpenAI's shape on every route (`{"error": {"message", "type", "code"}}`, see
# services/gateway/errors.py), so its SDKs show the reason instead of a bare status.
router = APIRouter(tags=["openai"], responses=error_responses(*KEYED))

ALL_DOCUMENTS = "treerag"
MODEL_PREFIX = f"{ALL_DOCUMENTS}/"
MESSAGES_MAX = 200
MESSAGE_MAX_CHARS = 100_000
MODELS_LISTED = 1000

ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = Field(default=None, max_length=MESSAGE_MAX_CHARS)


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[TextPart] | None = Field(default=None, max_length=MESSAGE_MAX_CHARS)

    def text(self) -> str:
        if isinstance(self.content, list):
            return " ".join(part.text or "" for part in self.content if part.type == "text").strip()
        return (self.content or "").strip()


class CompletionRequest(BaseModel):
    """OpenAI's request body; sampling options (temperature, max_tokens…) are accepted and
    ignored: the answer is extracted and verified, not sampled."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    model: ModelName
    messages: list[Message] = Field(min_length=1, max_length=MESSAGES_MAX)
    stream: bool = False
    timeout_s: float | None = Field(default=None, gt=0, le=QUERY_TIMEOUT_MAX_S)


class Evidence(BaseModel):
    """What `treerag` adds to a completion: what was asked, and how each sentence is supported."""

    query_id: str
    question: str = Field(description="What the documents were asked: the last user message, completed.")
    rewrite_reason: str = ""
    status: QueryStatus
    abstained: bool | None = None
    confidence: float | None = None
    citations: list[Citation] = Field(default_factory=list)
    sentences: list[SentenceCheck] = Field(default_factory=list, description="Each sentence's verdict and evidence.")
    reason: str | None = None


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


async def conversation(messages: list[Message], writer: FollowUpWriter | None) -> Rewrite:
    """The last user message, completed from the user messages before it (by the model when
    one is configured and gives a question, else by the rules)."""
    asked = [m.text() for m in messages if m.role == "user" and m.text()]
    if messages[-1].role != "user" or not asked:
        raise invalid(("body", "messages"), "the last message must be the user's question (role 'user', with text)")
    if len(asked[-1]) > QUESTION_MAX_CHARS:
        raise invalid(("body", "messages"), f"the question is longer than {QUESTION_MAX_CHARS} characters")
    previous: str | None = None
    for text in asked[:-1]:
        previous = standalone(text[:QUESTION_MAX_CHARS], previous).question
    rewrite = standalone(asked[-1], previous)
    if writer is not None and previous is not None:
        earlier = [text[:QUESTION_MAX_CHARS] for text in asked[:-1]]
        written: str | None = await asyncio.to_thread(writer.standalone, asked[-1], earlier)
        if written is not None:
            reason = "" if written == asked[-1] else f"rewritten by {writer.name} from the questions before it"
            return Rewrite(written, reason, names_own=rewrite.names_own)
    return rewrite


async def scope_of(gateway: Gateway, model: str, tenant: str) -> list[str]:
    if model == ALL_DOCUMENTS:
        return []
    if model.startswith(MODEL_PREFIX):
        return [(await tenant_document(gateway.documents, model[len(MODEL_PREFIX):], tenant)).doc_id]
    raise HTTPException(404, f"no model {model[:200]!r}; GET /v1/models lists them ({ALL_DOCUMENTS!r}: all documents)")


def evidence(record: QueryRecord, rewrite: Rewrite) -> Evidence:
    fields: dict[str, Any] = {}
    if record.outcome is not None:
        answer = record.outcome.answer
        fields = {"abstained": answer.abstained, "confidence": answer.confidence, "citations": answer.citations,
                  "sentences": answer.sentences}
    return Evidence(query_id=record.query_id, question=rewrite.question, rewrite_reason=rewrite.reason,
                    status=record.status, reason=record.reason, **fields)


def reply_text(record: QueryRecord, timeout_s: float) -> str:
    if record.outcome is not None:
        return record.outcome.answer.answer
    if record.status == QueryStatus.FAILED:
        return f"The question could not be answered: {record.reason or 'the pipeline failed'}."
    return f"No answer came within {timeout_s:g} s; ask again."


@router.get("/v1/models", response_model=ModelList)
async def list_models(caller: CallerDep, gateway: GatewayDep) -> ModelList:
    """`treerag` asks all of the tenant's documents; `treerag/<doc_id>` one ready document."""
    page = await gateway.documents.list_page(caller.tenant, MODELS_LISTED, None, DocumentStatus.READY)
    return ModelList(data=[ModelOut(id=ALL_DOCUMENTS, owned_by=caller.tenant)]
                     + [ModelOut(id=f"{MODEL_PREFIX}{r.doc_id}", owned_by=caller.tenant) for r in page.records])


@router.post("/v1/chat/completions",
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "A `chat.completion`, or with `stream` its chunks as server-sent events."},
                        502: {"description": "The pipeline failed: the completion says why."},
                        **ASKING_ERRORS,
                        **error_responses(404, 504, meanings={
                            404: "No such model (GET /v1/models lists them), or its document is not the caller's.",
                            504: "No answer within the timeout (`code`: query_timeout)."})})
async def create_chat_completion(req: CompletionRequest, caller: CallerDep, gateway: GatewayDep) -> Any:
    started = time.perf_counter()
    timeout_s = req.timeout_s or gateway.settings.query_timeout_s
    extend_deadline(timeout_s)
    rewrite = await conversation(req.messages, gateway.follow_ups)
    doc_ids = await query_documents(gateway.documents, await scope_of(gateway, req.model, caller.tenant), caller.tenant)
    question = Question(text=rewrite.question, doc_ids=doc_ids, settings=QuerySettings(), tenant=caller.tenant,
                        timeout_s=timeout_s, progress=req.stream, started=started)
    if req.stream:
        return StreamingResponse(streamed(gateway, question, rewrite, req.model), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    try:
        pending, finished = await ask(gateway, question)
    except StagesMissing as exc:
        return stages_missing(gateway, exc)
    record = finished or pending
    body = {
        "id": f"chatcmpl-{question.query_id}", "object": "chat.completion", "created": int(time.time()),
        "model": req.model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": reply_text(record, timeout_s)}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "treerag": evidence(record, rewrite).model_dump(mode="json"),
    }
    if finished is None:
        return error_response(504, reply_text(record, timeout_s), code="query_timeout")
    return JSONResponse(body, status_code=502 if record.status == QueryStatus.FAILED else 200)


def chunk(question: Question, model: str, delta: dict[str, Any], finish: str | None = None,
          extra: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"id": f"chatcmpl-{question.query_id}", "object": "chat.completion.chunk",
                            "created": int(time.time()), "model": model,
                            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if extra is not None:
        body["treerag"] = extra
    return f"data: {json.dumps(body)}\n\n".encode()


async def streamed(gateway: Gateway, question: Question, rewrite: Rewrite, model: str) -> AsyncIterator[bytes]:
    """The role at once, then each answer sentence, its marker included, as soon as the verifier
    has checked it, then the evidence; a failure or a timeout ends the stream with its reason as
    the message. The verified answer is the truth: what it holds beyond the sentences streamed
    follows it, and should it differ from them (a model that withdrew what it had written), it
    follows whole after a blank line."""
    queue = gateway.progress.listen(question.query_id)
    answering = asyncio.ensure_future(ask(gateway, question))
    told: InOrder[str] = InOrder()
    sent = ""
    try:
        yield chunk(question, model, {"role": "assistant", "content": ""})
        async for progress in heard(queue, answering):
            if progress.step != "sentence":
                continue
            for _index, shown in told.add(progress.index, progress.text):
                if shown:
                    piece = f" {shown}" if sent else shown
                    sent += piece
                    yield chunk(question, model, {"content": piece})
        try:
            pending, finished = await answering
        except StagesMissing as exc:
            yield chunk(question, model, {"content": f"Not answered now: {exc} has no live process; ask again."},
                        "stop")
            yield b"data: [DONE]\n\n"
            return
        except BackendUnavailable as exc:
            yield chunk(question, model, {"content": f"Not answered now: {exc}; ask again."}, "stop")
            yield b"data: [DONE]\n\n"
            return
        record = finished or pending
        text = reply_text(record, question.timeout_s)
        sentences = [s.text for s in record.outcome.answer.sentences] if record.outcome else []
        if text.startswith(sent):
            rest, unsent = text[len(sent):], sentences[told.next_index:] if sent else sentences
        else:
            rest, unsent = f"\n\n{text}", sentences
        for piece in split_like(rest, unsent):
            yield chunk(question, model, {"content": piece})
        yield chunk(question, model, {}, "stop", evidence(record, rewrite).model_dump(mode="json"))
        yield b"data: [DONE]\n\n"
    finally:
        gateway.progress.forget(question.query_id)
        if not answering.done():  # the client went away: the question is not waited for
            answering.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await answering


def split_like(text: str, sentences: list[str]) -> list[str]:
    """`text` cut where each of `sentences` starts in it (a sentence keeps the marker after it),
    so the pieces joined are `text` exactly."""
    starts = [0]
    for sentence in sentences[1:]:
        head = sentence[: max(1, min(len(sentence) - 1, 40))]
        found = text.find(head, starts[-1] + 1)
        if found > starts[-1]:
            starts.append(found)
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True) if text[a:b]]
