"""Document text on the bus is sealed with its documents' keys: retained messages hold none of
it in the clear, open again while the documents exist, and never once a document is deleted."""

from __future__ import annotations

import asyncio
import base64

import pytest

from shared.adapters.memory.document_keys import InMemoryDocumentKeys
from shared.adapters.sealing import EventSealer, TextErased
from shared.model.delivery import PermanentError
from shared.model.events import (
    AnswerVerified,
    ContextCompressed,
    NodesSelected,
    QueryOutcome,
    QueryProgress,
    QueryReceived,
)
from shared.model.query import (
    Citation,
    CompressedContext,
    EvidenceWindow,
    NavigationResult,
    Passage,
    SentenceCheck,
    TraversalStats,
    VerifiedAnswer,
)

SECRET = "The relief valve of unit 7 opens at 42 bar."


def passage(doc_id: str, text: str = SECRET) -> Passage:
    return Passage(doc_id=doc_id, node_id="n1", title="Relief valves", pages=[3], text=text)


def selected(*doc_ids: str) -> NodesSelected:
    return NodesSelected(
        query_id="q1", question="When does the valve open?", documents=[(d, 1) for d in doc_ids],
        navigation=NavigationResult(question="When does the valve open?", mode="dfs",
                                    passages=[passage(d) for d in doc_ids], stats=TraversalStats()),
    )


def verified() -> AnswerVerified:
    window = EvidenceWindow(doc_id="a", page=3, start=0, end=len(SECRET), text=SECRET)
    check = SentenceCheck(text=SECRET, citation=Citation(doc_id="a", pages=[3]), signals={}, score=0.9,
                          grounded=True, verdict="supported", reason="the window covers 100% of the sentence",
                          window=window)
    answer = VerifiedAnswer(question="When?", answer=SECRET + " [a, p. 3]", sentences=[check],
                            citations=[Citation(doc_id="a", pages=[3])])
    return AnswerVerified(query_id="q1", question="When?", documents=[("a", 1)],
                          outcome=QueryOutcome(answer=answer, mode="dfs"))


def test_sealed_events_hold_no_document_text_and_open_to_the_same_event() -> None:
    sealer = EventSealer(InMemoryDocumentKeys())
    compressed = ContextCompressed(
        query_id="q1", question="When?", documents=[("a", 1)],
        navigation={"mode": "dfs", "stats": {}},
        context=CompressedContext(question="When?", passages=[passage("a")], tokens_before=9, tokens_after=9),
    )
    streamed = QueryProgress(query_id="q1", documents=[("a", 1)], step="sentence",
                             sentence=verified().outcome.answer.sentences[0],
                             text="Relief valves open at 42 bar [a.pdf, p. 3].")
    drafted = QueryProgress(query_id="q1", documents=[("a", 1)], step="draft", index=0,
                            text="Relief valves open at 42 bar [a.pdf, p. 3]. The")
    for event in (selected("a"), compressed, verified(), streamed, drafted):
        sealed = asyncio.run(sealer.seal(event))
        wire = sealed.model_dump_json()
        assert "42 bar" not in wire and "Relief valves" not in wire
        assert sealed.sealed_for == ["a"]
        received = type(event).model_validate_json(wire)
        assert asyncio.run(sealer.open(received)) == event
    route = QueryProgress(query_id="q1", documents=[("a", 1)], step="routed", pages=[("a", 3)])
    assert asyncio.run(sealer.seal(route)) == route  # ids and page numbers only: nothing to seal


def test_a_deleted_documents_text_cannot_be_opened_from_a_retained_message() -> None:
    keys = InMemoryDocumentKeys()
    sealer = EventSealer(keys)
    wire = asyncio.run(sealer.seal(selected("a", "b"))).model_dump_json()
    asyncio.run(keys.destroy("b"))  # the deletion of one of the query's documents starts
    with pytest.raises(TextErased, match="deleted") as erased:
        asyncio.run(sealer.open(NodesSelected.model_validate_json(wire)))
    assert isinstance(erased.value, PermanentError)  # not retried: it cannot get better


def test_an_altered_message_does_not_open() -> None:
    sealer = EventSealer(InMemoryDocumentKeys())
    sealed = asyncio.run(sealer.seal(selected("a")))
    text = sealed.navigation.passages[0].text
    raw = bytearray(base64.b64decode(text))
    raw[-1] ^= 1
    sealed.navigation.passages[0].text = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(TextErased, match="altered"):
        asyncio.run(sealer.open(sealed))
    # Nor does it open as another query's message: the text is bound to its query id.
    moved = asyncio.run(sealer.seal(selected("a"))).model_copy(update={"query_id": "q2"})
    with pytest.raises(TextErased):
        asyncio.run(sealer.open(moved))


def test_events_without_document_text_pass_as_they_are() -> None:
    sealer = EventSealer(InMemoryDocumentKeys())
    received = QueryReceived(query_id="q1", question="When?")
    assert asyncio.run(sealer.seal(received)) is received
    old = selected("a")  # a message from before sealing: nothing sealed, read as it is
    assert asyncio.run(sealer.open(old)) is old
