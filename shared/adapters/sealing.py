"""Document text on the bus, sealed with the keys of the documents it comes from.

Kafka keeps a message until its topic's retention and cannot delete one, so a deleted
document's text would outlive it in every retained `nodes.selected`, `context.compressed` and
`answer.verified` (and `query.progress`, a streamed answer's draft and sentences). Instead, each text field
of those events (the passages' text and titles, the answer, its sentences, their reasons and
evidence windows) travels encrypted (AES-256-GCM,
bound to the query id) with a key derived from the keys of the query's documents. A document's
key is destroyed when its deletion starts (`shared/app/deletion.py`); from then on, no retained
message that holds its text can be read by anyone, however long Kafka keeps it. The question
(the asker's own words), ids, page numbers, scores and the path's section titles travel as they
are. The one-process path puts nothing on a bus and seals nothing.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from shared.model.delivery import PermanentError
from shared.model.events import AnswerVerified, ContextCompressed, Event, NodesSelected, QueryEvent, QueryProgress
from shared.model.query import Passage, SentenceCheck
from shared.ports.document_keys import DocumentKeys

NONCE_BYTES = 12
# What the derived key is for: a key made for another use from the same document keys differs.
PURPOSE = b"treerag: document text on the bus, v1"
SEALED_TYPES: tuple[type[QueryEvent], ...] = (NodesSelected, ContextCompressed, AnswerVerified, QueryProgress)

E = TypeVar("E", bound=Event)


class TextErased(PermanentError):
    """The text of a message cannot be read: a document it comes from was deleted (its key is
    gone), or the message was altered. Asking again answers from what is stored now."""


def derived_key(keys: dict[str, bytes]) -> bytes:
    """One AES-256 key from the keys of all the documents: losing any one loses it."""
    digest = hashlib.sha256(PURPOSE)
    for doc_id in sorted(keys):
        digest.update(doc_id.encode() + b"\0" + keys[doc_id])
    return digest.digest()


class _Cipher:
    def __init__(self, key: bytes, query_id: str) -> None:
        self._aead = AESGCM(key)
        self._bound = query_id.encode()

    def seal(self, text: str) -> str:
        if not text:
            return text
        nonce = os.urandom(NONCE_BYTES)
        return base64.b64encode(nonce + self._aead.encrypt(nonce, text.encode(), self._bound)).decode()

    def open(self, sealed: str) -> str:
        if not sealed:
            return sealed
        try:
            raw = base64.b64decode(sealed, validate=True)
            return self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], self._bound).decode()
        except (InvalidTag, ValueError) as exc:
            raise TextErased("a message's document text does not open with its documents' keys: "
                             "it was altered, or a document was deleted meanwhile; ask again") from exc


def _passages(passages: Sequence[Passage], apply: Callable[[str], str]) -> list[Passage]:
    return [p.model_copy(update={"text": apply(p.text), "title": apply(p.title)}) for p in passages]


def _sentences(sentences: Sequence[SentenceCheck], apply: Callable[[str], str]) -> list[SentenceCheck]:
    def one(s: SentenceCheck) -> SentenceCheck:
        window = s.window.model_copy(update={"text": apply(s.window.text)}) if s.window else None
        return s.model_copy(update={"text": apply(s.text), "reason": apply(s.reason), "window": window})

    return [one(s) for s in sentences]


def _texts_changed(event: E, apply: Callable[[str], str]) -> E:
    """`event` with `apply` done to each of its document text fields."""
    if isinstance(event, NodesSelected):
        navigation = event.navigation.model_copy(update={"passages": _passages(event.navigation.passages, apply)})
        return event.model_copy(update={"navigation": navigation})
    if isinstance(event, ContextCompressed):
        context = event.context.model_copy(update={"passages": _passages(event.context.passages, apply)})
        return event.model_copy(update={"context": context})
    if isinstance(event, AnswerVerified):
        answer = event.outcome.answer
        answer = answer.model_copy(update={"answer": apply(answer.answer),
                                           "sentences": _sentences(answer.sentences, apply)})
        return event.model_copy(update={"outcome": event.outcome.model_copy(update={"answer": answer})})
    if isinstance(event, QueryProgress) and event.sentence is not None:
        return event.model_copy(update={"sentence": _sentences([event.sentence], apply)[0],
                                        "text": apply(event.text) if event.text else ""})
    if isinstance(event, QueryProgress) and event.text:
        return event.model_copy(update={"text": apply(event.text)})
    return event


def sealing_documents(event: QueryEvent) -> list[str]:
    """The documents whose keys seal an event's text: those the query was asked over, or, for
    an event that names none, those its text comes from."""
    if event.documents:
        return sorted({doc_id for doc_id, _ in event.documents})
    found: set[str] = set()
    if isinstance(event, NodesSelected):
        found = {p.doc_id for p in event.navigation.passages}
    elif isinstance(event, ContextCompressed):
        found = {p.doc_id for p in event.context.passages}
    elif isinstance(event, AnswerVerified):
        found = {c.doc_id for c in event.outcome.answer.citations}
    elif isinstance(event, QueryProgress):
        found = {doc_id for doc_id, _ in event.pages}
        if event.sentence is not None and event.sentence.citation is not None:
            found.add(event.sentence.citation.doc_id)
    return sorted(found)


class EventSealer:
    def __init__(self, keys: DocumentKeys) -> None:
        self.keys = keys

    async def seal(self, event: E) -> E:
        """`event` as it goes on the bus: its document text sealed (other events as they are)."""
        if not isinstance(event, SEALED_TYPES) or event.sealed_for:
            return event
        if isinstance(event, QueryProgress) and event.step == "routed":
            return event  # a route holds ids and page numbers only
        doc_ids = sealing_documents(event)
        if not doc_ids:
            return event
        keys = await self.keys.keys_for(doc_ids, create=True)
        missing = [d for d in doc_ids if d not in keys]
        if missing:
            raise TextErased(f"document {missing[0]} is being deleted: its text is not put on the bus")
        cipher = _Cipher(derived_key(keys), event.query_id)
        sealed = _texts_changed(event, cipher.seal)
        return sealed.model_copy(update={"sealed_for": doc_ids})

    async def open(self, event: E) -> E:
        """`event` as a handler reads it: its document text opened."""
        if not isinstance(event, QueryEvent) or not event.sealed_for:
            return event
        keys = await self.keys.keys_for(event.sealed_for, create=False)
        missing = [d for d in event.sealed_for if d not in keys]
        if missing:
            raise TextErased(f"document {missing[0]} was deleted: the text this message held is erased; ask again")
        cipher = _Cipher(derived_key(keys), event.query_id)
        return _texts_changed(event, cipher.open).model_copy(update={"sealed_for": []})
