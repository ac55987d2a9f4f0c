"""Every ranking and abstention feature measures what the table in its module says.

Each test builds a small document where one page should score higher than another on exactly
the property the feature names, and checks the feature's value on both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from services.navigator.index import DocumentIndex
from services.navigator.navigate import Exploration
from services.navigator.ranking.features import FEATURES
from services.navigator.ranking.fused import ABSTENTION_SIGNALS, rank
from shared.model.query import QuerySettings
from tests.support.navigation import explore, shipped_model
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build

OTHER = (
    "Visitors sign the register at the gate. Parking is allowed in the east yard only. "
    "Lunch is served in the canteen between noon and two."
)


def _document(pages: list[str], nodes: list | None = None, doc_id: str = "f" * 16) -> DocumentIndex:  # noqa: ANN001
    return build(indexed(doc_id, "manual.pdf", pages, nodes or [node("0001", "Manual", 1, len(pages))]))


def _explored(question: str, index: DocumentIndex) -> Exploration:
    found = explore(question, [index], QuerySettings())
    assert found.candidates is not None
    return found


def _rows(question: str, index: DocumentIndex) -> dict[int, dict[str, float]]:
    """Feature rows of every candidate page, by 1-based page."""
    candidates = _explored(question, index).candidates
    return {page: dict(zip(FEATURES, candidates.matrix[k].tolist(), strict=True))
            for k, (_, page) in enumerate(candidates.keys)}


def _abstention(question: str, indexes: list[DocumentIndex]) -> dict[str, float]:
    found = explore(question, indexes, QuerySettings())
    assert found.candidates is not None
    ranking = rank(found.candidates, shipped_model(), found.missing)
    return dict(zip(ABSTENTION_SIGNALS, ranking.abstention_row.tolist(), strict=True))


def test_bm25_is_relative_to_the_best_candidate_and_bm25_rank_is_the_pages_place() -> None:
    pages = [
        f"Valve inspection. Every valve inspection is logged; valve inspection records are kept. {OTHER}",
        f"Valve inspection happens yearly. {OTHER} {FILLER}",
        f"Pump maintenance. {OTHER} {FILLER}",
    ]
    rows = _rows("How is valve inspection logged?", _document(pages))
    assert rows[1]["bm25"] == 1.0 and 0.0 < rows[2]["bm25"] < 1.0
    assert rows[1]["bm25_rank"] == 1.0 and rows[2]["bm25_rank"] == 0.5


def test_proximity_rewards_the_question_terms_found_together() -> None:
    together = f"{OTHER} The coolant pump seal is replaced by the night crew. {FILLER}"
    apart = f"The coolant is drained first. {OTHER} {FILLER} Each pump is labelled. {FILLER} A seal kit is stored. {FILLER}"
    rows = _rows("Who replaces the coolant pump seal?", _document([together, apart]))
    assert rows[1]["proximity"] > rows[2]["proximity"]


def test_summary_path_reads_the_summaries_of_the_enclosing_sections() -> None:
    pages = [f"Chapter text. {FILLER}", f"Chapter text. {FILLER}", f"Chapter text. {FILLER}"]
    nodes = [
        node("0001", "Chapter one", 1, 1, summary="How the boiler is descaled with citric acid."),
        node("0002", "Chapter two", 2, 3, summary="Visitor parking and canteen hours."),
    ]
    rows = _rows("How is the boiler descaled?", _document(pages, nodes))
    assert rows[1]["summary_path"] > 0.5
    assert rows.get(2, {"summary_path": 0.0})["summary_path"] == 0.0


@pytest.mark.parametrize(("question", "first", "second", "feature", "expected"), [
    # Pairs asked: (safety, valve) and (valve, open); the second page holds only the latter.
    ("When does the safety valve open?", f"The safety valve opens at twelve bar. {OTHER} {FILLER}",
     f"The valve opens at twelve bar. {OTHER} Safety comes first. {FILLER}", "page_pairs", (1.0, 0.5)),
    # An option is matched as written, not as the bare word its letters spell.
    ("What does the --verbose option print?", f"Start the tool with --verbose to print every step. {FILLER}",
     f"Verbose output prints every step of the tool. {FILLER}", "literal", (1.0, 0.0)),
])
def test_word_pairs_and_literals_match_as_the_question_writes_them(
    question: str, first: str, second: str, feature: str, expected: tuple[float, float]
) -> None:
    rows = _rows(question, _document([first, second]))
    assert (rows[1][feature], rows[2][feature]) == expected


def test_node_probability_and_tree_features_follow_the_walk() -> None:
    pages = [
        f"Introduction. {OTHER} {FILLER}",
        f"Filters are replaced when the intake filter gauge shows red. {FILLER}",
        f"Parking rules. {OTHER} {FILLER}",
    ]
    nodes = [node("0001", "Introduction", 1, 1), node("0002", "Intake filter replacement", 2, 2),
             node("0003", "Parking", 3, 3)]
    index = _document(pages, nodes)
    found = _explored("When is the intake filter replaced?", index)
    rows = _rows("When is the intake filter replaced?", index)
    assert found.evidence[0].tree_pages[0] == 2
    assert rows[2]["tree_rank"] == 1.0 and rows[2]["tree_score"] == 1.0
    assert rows[2]["node_probability"] > max(r["node_probability"] for p, r in rows.items() if p != 2)
    for page, row in rows.items():
        if page not in found.evidence[0].tree_pages:
            assert row["tree_rank"] == 0.0 and row["tree_score"] == 0.0


def test_listing_numeric_and_position_describe_the_page() -> None:
    pages = [
        "Contents\nValve checks ........ 2\nValve records ........ 3\nValve parts ........ 4\nIndex 5",
        f"Valve checks are done weekly by the crew. {FILLER}",
        "Valve counts 12 14 18 20\n2021 2022 2023 2024\n1,204 1,180 1,310 1,422",
    ]
    rows = _rows("How often are valve checks done?", _document(pages))
    assert rows[1]["listing"] > 0.5 and rows[2]["listing"] == 0.0
    assert rows[3]["numeric"] > 0.5 and rows[2]["numeric"] < 0.1
    assert rows[1]["position"] == 0.0 and rows[2]["position"] == 0.5 and rows[3]["position"] == 1.0


def test_abstention_features_describe_the_best_page_and_what_no_document_has() -> None:
    pages = [
        f"The coolant pump is serviced every 500 operating hours. {FILLER}",
        f"Parking rules. {OTHER}",
        f"Canteen hours. {OTHER}",
    ]
    index = _document(pages)
    known = _abstention("How often is the coolant pump serviced?", [index])
    assert known["absent_terms"] == 0.0 and known["unmentioned_names"] == 0.0
    assert known["unmentioned_abbreviations"] == 0.0
    assert known["support"] == 1.0 and known["proximity"] == 1.0
    assert known["margin"] > 0.0 and known["top_score"] > 0.0
    assert known["bm25"] == pytest.approx(math.log1p(float(_explored("How often is the coolant pump serviced?", index)
                                                               .evidence[0].page_bm25.max())))
    assert 0.0 < known["dense"] <= 1.0
    # Half of the question's words, and its one name, appear in no document.
    unknown = _abstention("How often is the Zephyrine quasar serviced?", [index])
    assert unknown["absent_terms"] > 0.5 and unknown["unmentioned_names"] == 1.0
    assert unknown["unmentioned_abbreviations"] == 0.0
    assert unknown["support"] < known["support"]
    # A proper name the document never mentions counts apart from an abbreviation it never uses:
    # one is what the question is about, the other often only the asker's shorthand.
    mixed = _abstention("How often does Zephyrine service the coolant pump per QMS rules?", [index])
    assert mixed["unmentioned_names"] == 0.5 and mixed["unmentioned_abbreviations"] == 0.5


def test_every_feature_is_on_a_bounded_scale() -> None:
    pages = [f"Page {n}. The coolant pump is serviced every {n}00 hours. {FILLER}" for n in range(1, 9)]
    candidates = _explored("How often is the coolant pump serviced?", _document(pages)).candidates
    assert np.isfinite(candidates.matrix).all()
    assert (candidates.matrix >= 0.0).all() and (candidates.matrix <= 1.0 + 1e-9).all()
