"""Cross-validation folds split by document, and question/document pairs no document can answer.

Folds: every document of every question set goes to exactly one fold, so no document has
questions on both sides of a split. Documents are dealt largest first (most questions) to the
fold with the fewest questions so far (ties: the lower fold number): deterministic and
balanced.

Off-topic pairs: each question is also asked of one document of every *other* collection
(chosen by a hash of the question id, deterministic), never of a document its own collection
also asks about (collections may share documents); none can answer it.

Missing-name pairs: each answerable question is also asked of one other document of its own
collection that never mentions a name the question uses and its own document mentions (a
question about one company's filing, asked of another company's). The document is of the same
kind and speaks the same vocabulary, so only what the question is about tells it apart; it
cannot answer.

Evidence-removed pairs: each answerable question is also asked of its own document with its
evidence pages blanked (and the summaries of sections opening on them): the document stays on
topic, speaks the question's words and names its subject, but no longer holds the answer, as
with a question a manual or filing never answers. A page the annotators did not list may still
hold the answer (a figure repeated in a filing's summary tables), so these pairs are noisy
negatives: they measure how often an on-topic question without its answer is refused, and
teach the abstention model what topical support without an answer page looks like.

A pair of any kind belongs to the fold of the document asked.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from services.navigator.index import DocumentIndex
from shared.text.names import named_words
from treerag.evaluation.dataset import QAItem


class NegativePair(BaseModel):
    """A question asked of a document that cannot answer it."""

    item_id: str
    question: str
    question_doc: str  # the document the question was written for
    collection: str  # the question's collection
    doc: str  # the document it is asked of
    kind: Literal["off-topic", "missing-name", "evidence-removed"] = "off-topic"
    # 1-based pages blanked in `doc` before asking (evidence-removed pairs only).
    without_pages: tuple[int, ...] = ()


Split = Literal["document", "collection", "company"]
SPLITS: tuple[str, ...] = ("document", "collection", "company")


def assign_folds(items: Sequence[QAItem], k: int, group: Callable[[QAItem], str] | None = None) -> dict[str, int]:
    """Document file name -> fold number (0..k-1); the documents of one `group` (by default each
    document alone) share a fold."""
    if k < 2:
        raise ValueError(f"--folds must be at least 2 (got {k})")
    group = group or (lambda item: item.doc)
    counts = Counter(group(item) for item in items)
    load = [0] * k
    fold_of_group: dict[str, int] = {}
    for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_of_group[name] = fold
        load[fold] += n
    return {item.doc: fold_of_group[group(item)] for item in items}


def issuer_key(index: DocumentIndex) -> str:
    """The issuer the document's card names, in a form two filings of one company share."""
    card = index.record.card
    return re.sub(r"[^a-z0-9]+", " ", card.issuer.lower()).strip() if card is not None else ""


@dataclass(frozen=True)
class Folds:
    """Which fold judges each question and which folds may not train on each document."""

    k: int
    of_item: dict[str, int]
    held_out: dict[str, frozenset[int]]  # document -> the folds it is held out of

    def trains(self, doc: str, fold: int) -> bool:
        """Whether `fold`'s model may learn from the document."""
        return fold not in self.held_out.get(doc, frozenset())

    def judges(self, pair: NegativePair) -> int:
        """The fold that asks a pair: one of the asked document's."""
        return min(self.held_out[pair.doc])

    def with_pool(self, indexes: Mapping[str, DocumentIndex], pool: Sequence[str]) -> Folds:
        """The pool's documents held out of every fold that holds out a document of the same
        issuer (by their cards), so that no fold learns to route among the other filings of a
        company it is judged on; a pool document of no known issuer trains every fold."""
        issuer_folds: dict[str, set[int]] = {}
        for doc, folds in self.held_out.items():
            key = issuer_key(indexes[doc]) if doc in indexes else ""
            if key:
                issuer_folds.setdefault(key, set()).update(folds)
        held_out = dict(self.held_out)
        for doc in pool:
            key = issuer_key(indexes[doc])
            if doc not in held_out and key in issuer_folds:
                held_out[doc] = frozenset(issuer_folds[key])
        return Folds(self.k, self.of_item, held_out)

    @property
    def of_document(self) -> dict[str, int]:
        return {doc: min(folds) for doc, folds in sorted(self.held_out.items())}


def fold_assignment(collections: Mapping[str, Sequence[QAItem]], k: int, split: Split) -> Folds:
    """`document`: K folds of documents; `company`: K folds in which a company's documents stay
    together (an item without a company is its document's own group); `collection`: one fold
    per collection, each held out in turn, K being their number: a fold's model learns nothing
    from any document the held-out collection asks about, even one another collection also
    asks about. `k == 0`: one fold holding everything, for an evaluation without fitting."""
    items = [item for name in sorted(collections) for item in collections[name]]
    if k == 0:
        return Folds(1, {item.id: 0 for item in items}, {item.doc: frozenset({0}) for item in items})
    if split == "collection":
        if len(collections) < 2:
            raise ValueError("a leave-one-collection-out split needs at least two question sets")
        of_item = {item.id: n for n, name in enumerate(sorted(collections)) for item in collections[name]}
        held_out: dict[str, set[int]] = {}
        for item in items:
            held_out.setdefault(item.doc, set()).add(of_item[item.id])
        return Folds(len(collections), of_item, {doc: frozenset(f) for doc, f in held_out.items()})
    if split == "company":
        of_document = assign_folds(items, k, lambda item: f"company:{item.company}" if item.company else item.doc)
    else:
        of_document = assign_folds(items, k)
    return Folds(k, {item.id: of_document[item.doc] for item in items},
                 {doc: frozenset({fold}) for doc, fold in of_document.items()})


def off_topic_pairs(collections: Mapping[str, Sequence[QAItem]]) -> list[NegativePair]:
    documents = {name: sorted({item.doc for item in items}) for name, items in collections.items()}
    pairs: list[NegativePair] = []
    for source in sorted(collections):
        own = set(documents[source])
        for item in collections[source]:
            for target in sorted(collections):
                if target == source:
                    continue
                docs = [d for d in documents[target] if d not in own]
                if not docs:
                    continue
                doc = docs[zlib.crc32(f"{item.id}:{target}".encode()) % len(docs)]
                pairs.append(NegativePair(item_id=item.id, question=item.question, question_doc=item.doc,
                                          collection=source, doc=doc))
    return pairs


def missing_name_pairs(
    collections: Mapping[str, Sequence[QAItem]], mentions: Callable[[str, str], bool]
) -> list[NegativePair]:
    """One missing-name pair per answerable question that has one (`mentions(doc, term)`: the
    document mentions the name's index term), the document chosen by a hash of the question id."""
    documents = {name: sorted({item.doc for item in items}) for name, items in collections.items()}
    pairs: list[NegativePair] = []
    for source in sorted(collections):
        for item in collections[source]:
            if not item.answerable:
                continue
            names = [term for term, _ in named_words(item.question) if mentions(item.doc, term)]
            if not names:
                continue
            docs = [d for d in documents[source] if d != item.doc and not all(mentions(d, t) for t in names)]
            if not docs:
                continue
            doc = docs[zlib.crc32(f"{item.id}:missing-name".encode()) % len(docs)]
            pairs.append(NegativePair(item_id=item.id, question=item.question, question_doc=item.doc,
                                      collection=source, doc=doc, kind="missing-name"))
    return pairs


def evidence_removed_pairs(collections: Mapping[str, Sequence[QAItem]]) -> list[NegativePair]:
    """One evidence-removed pair per answerable question: its own document without its evidence
    pages."""
    return [
        NegativePair(item_id=item.id, question=item.question, question_doc=item.doc, collection=source,
                     doc=item.doc, kind="evidence-removed", without_pages=tuple(sorted(set(item.evidence_pages))))
        for source in sorted(collections)
        for item in collections[source]
        if item.answerable and item.evidence_pages
    ]
