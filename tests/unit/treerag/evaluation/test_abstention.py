"""Off-topic abstention benchmark logic on two unrelated hand-made documents."""

from __future__ import annotations

import pytest

from tests.support.query.documents import kitchen_guide, plant_manual
from tests.support.query.indexes import build
from treerag.evaluation.abstention import off_topic_abstention
from treerag.evaluation.dataset import QAItem


def item(id: str, doc: str, question: str, answer: str = "x", pages: list[int] | None = None) -> QAItem:
    return QAItem(id=id, doc=doc, question=question, answer=answer, evidence_pages=pages or [1])


COLLECTIONS = {
    "plant": [
        item("p1", "plant.pdf", "How often must the coolant pump be serviced?", "every 500 hours", [2]),
        item("p2", "plant.pdf", "At what pressure does the safety valve open?", "12 bar", [4]),
    ],
    "kitchen": [
        item("k1", "kitchen.pdf", "How many eggs does the chocolate cake need?", "three", [3]),
        item("k2", "kitchen.pdf", "At what temperature is the bread baked?", "220 degrees", [1]),
    ],
}


def test_questions_of_another_collection_abstain_and_own_questions_do_not() -> None:
    indexes = {"plant.pdf": build(plant_manual()), "kitchen.pdf": build(kitchen_guide())}
    report = off_topic_abstention(COLLECTIONS, indexes)
    assert report.off_topic_pairs == 4
    assert [(d.questions_from, d.documents_from, d.pairs) for d in report.directions] == [
        ("kitchen", "plant", 2), ("plant", "kitchen", 2),
    ]
    assert report.off_topic_share_abstained == 1.0
    assert report.answerable_questions == 4
    assert report.answerable_wrongly_abstained == 0 and report.wrongly_abstained_ids == []


def test_unanswerable_items_are_not_counted_as_wrong_abstentions() -> None:
    indexes = {"plant.pdf": build(plant_manual()), "kitchen.pdf": build(kitchen_guide())}
    collections = {
        **COLLECTIONS,
        "plant": [*COLLECTIONS["plant"], item("p3", "plant.pdf", "Who founded the plant?", "NOT_IN_DOCUMENT")],
    }
    report = off_topic_abstention(collections, indexes)
    assert report.answerable_questions == 4
    assert report.off_topic_pairs == 5


def test_a_missing_index_is_named() -> None:
    with pytest.raises(KeyError, match="kitchen.pdf"):
        off_topic_abstention(COLLECTIONS, {"plant.pdf": build(plant_manual())})
