"""Conversations: which thread a caller may use, and how its next question is asked — one rule
for the HTTP chats, the OpenAI-compatible endpoint and `treerag chat`.

A follow-up is completed from the turn before it (shared/text/followups.py) and asked over the
documents that turn's answer came from (those it cites, else those it was asked over), unless it
names something that turn did not (a name, a period): then over the thread's own documents (all
of the tenant's when it has none).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from shared.model.chats import CHAT_TURNS_MAX, ChatThread
from shared.ports.chats import ChatStore
from shared.ports.model_roles import FollowUpWriter
from shared.text.followups import Rewrite, standalone

# The turns a model reads to rewrite a follow-up.
WRITER_CONTEXT_TURNS = 4


class ChatNotFound(LookupError):
    def __init__(self, chat_id: str) -> None:
        shown = chat_id if len(chat_id) <= 64 else f"{chat_id[:64]}… ({len(chat_id)} characters)"
        super().__init__(f"no chat {shown!r}")
        self.chat_id = chat_id


class ChatFull(RuntimeError):
    def __init__(self) -> None:
        super().__init__(f"this chat has {CHAT_TURNS_MAX} turns, as many as a chat keeps; start a new chat "
                         "(its first question is asked as written)")


@dataclass(frozen=True)
class NextTurn:
    rewrite: Rewrite
    doc_ids: list[str]  # to ask over; empty: every document of the tenant


async def tenant_chat(chats: ChatStore, chat_id: str, tenant: str) -> ChatThread:
    """The thread when it is the tenant's; another tenant's is not found, as a document is."""
    thread = await chats.get(chat_id)
    if thread is None or thread.tenant != tenant:
        raise ChatNotFound(chat_id)
    return thread


def follow(question: str, previous: str | None, previous_docs: list[str], thread_docs: list[str]) -> NextTurn:
    """The next question of a conversation whose last standalone question was `previous`."""
    rewrite = standalone(question, previous)
    in_scope = previous_docs if previous is not None and not rewrite.names_own else thread_docs
    return NextTurn(rewrite, list(in_scope))


async def written_by(writer: FollowUpWriter | None, turn: NextTurn, question: str, previous: list[str]) -> NextTurn:
    """`turn` with its question written out by the model when there is one and it gives one
    (the scope stays the rules': it depends on what the question names, not on the wording)."""
    if writer is None or not previous:
        return turn
    text = await asyncio.to_thread(writer.standalone, question, previous)
    if text is None:
        return turn
    reason = "" if text == question else f"rewritten by {writer.name} from the questions before it"
    return replace(turn, rewrite=replace(turn.rewrite, question=text, reason=reason))


async def next_turn(chats: ChatStore, thread: ChatThread, question: str,
                    writer: FollowUpWriter | None = None) -> NextTurn:
    if thread.turns >= CHAT_TURNS_MAX:
        raise ChatFull()
    last = await chats.turns(thread.chat_id, last=WRITER_CONTEXT_TURNS if writer else 1)
    if not last:
        return follow(question, None, [], thread.doc_ids)
    previous = last[-1]
    cited = sorted(dict.fromkeys(c.doc_id for c in previous.citations))
    turn = follow(question, previous.standalone, cited or previous.doc_ids, thread.doc_ids)
    return await written_by(writer, turn, question, [t.standalone for t in last])
