"""Conversations on the real FerretDB: turns kept in order per thread, threads listed per tenant,
and every thread over or citing a deleted document removed with it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from shared.adapters.mongo.chats import MongoChatStore
from shared.adapters.mongo.store import connect
from shared.model.chats import ChatThread, ChatTurn
from shared.model.query import Citation
from shared.model.query_records import QueryStatus

pytestmark = pytest.mark.integration


@pytest.fixture
async def chats(infra: Any) -> AsyncIterator[MongoChatStore]:
    client = connect(infra.mongo_url)
    name = f"chats_{uuid.uuid4().hex[:8]}"
    store = MongoChatStore(client[name])
    await store.ensure_indexes()
    yield store
    await client.drop_database(name)
    await client.close()


def turn(chat_id: str, question: str, cited: str | None = None, asked_over: list[str] | None = None) -> ChatTurn:
    citations = [Citation(doc_id=cited, pages=[3])] if cited else []
    return ChatTurn(chat_id=chat_id, turn=0, question=question, standalone=question, query_id=uuid.uuid4().hex,
                    status=QueryStatus.ANSWERED, answer="It is 12 bar.", citations=citations,
                    doc_ids=asked_over or [])


async def test_turns_come_back_in_order_and_the_last_ones_alone(chats: MongoChatStore) -> None:
    await chats.create(ChatThread(chat_id="c1", tenant="t"))
    await asyncio.gather(*(chats.add_turn(turn("c1", f"question {n}?")) for n in range(12)))
    turns = await chats.turns("c1")
    assert [t.turn for t in turns] == list(range(1, 13))  # concurrent appends each got their own number
    assert [t.turn for t in await chats.turns("c1", last=2)] == [11, 12]
    assert (await chats.get("c1")).turns == 12  # type: ignore[union-attr]
    assert not await chats.add_turn(turn("missing", "Hi?"))


async def test_threads_are_listed_per_tenant_most_recent_first(chats: MongoChatStore) -> None:
    for chat_id, tenant in (("a", "t1"), ("b", "t1"), ("c", "t2")):
        await chats.create(ChatThread(chat_id=chat_id, tenant=tenant))
    await chats.add_turn(turn("a", "Hi?"))
    assert [t.chat_id for t in await chats.recent("t1", 10)] == ["a", "b"]
    assert [t.chat_id for t in await chats.recent("t2", 10)] == ["c"]


async def test_a_deleted_document_takes_the_threads_over_or_citing_it(chats: MongoChatStore) -> None:
    await chats.create(ChatThread(chat_id="cites", tenant="t"))
    await chats.add_turn(turn("cites", "What is the pressure?", cited="gone"))
    await chats.create(ChatThread(chat_id="asked", tenant="t"))
    await chats.add_turn(turn("asked", "What is the pressure?", asked_over=["gone"]))
    await chats.create(ChatThread(chat_id="scoped", tenant="t", doc_ids=["gone"]))
    await chats.create(ChatThread(chat_id="kept", tenant="t"))
    await chats.add_turn(turn("kept", "What is the flow?", cited="other"))
    assert await chats.forget_document("gone") == 3
    assert [t.chat_id for t in await chats.recent("t", 10)] == ["kept"]
    assert await chats.turns("cites") == [] and len(await chats.turns("kept")) == 1
    assert await chats.forget_document("gone") == 0
