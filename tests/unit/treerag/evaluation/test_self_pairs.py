"""The questions documents ask of themselves: written as an analyst writes one, answered by
the page they came from, and enough on their own to teach the router who and which period a
question means."""

from __future__ import annotations

import numpy as np
import pytest

from services.navigator.index import DocumentIndex
from services.navigator.route_features import ROUTING_FEATURES
from shared.model.card import DocType, DocumentCard, DocumentPeriod
from shared.text.organisations import common_name
from shared.text.periods import question_period
from tests.support.navigation import document_features
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build
from treerag.evaluation.routing_fit import ALL_FEATURES, routing_weights
from treerag.evaluation.self_pairs import MIN_PAGE_CHARS, shelf_questions

COMPANIES = ("Stridewell", "Pacer", "Lumora")
YEARS = (2016, 2017, 2018)
TOPICS = (
    ("pension", "actuarial obligations and plan assets are measured at the year end"),
    ("backlog", "firm orders not yet delivered are recognised as deliveries occur"),
    ("warranty", "estimated repair costs are accrued when products are shipped"),
    ("lease", "operating lease liabilities are discounted at incremental borrowing rates"),
)


def _annual_report(company: str, year: int) -> DocumentIndex:
    """A company's annual report: the cover names it and the year; every year's report of a
    company says the same things with its own figures, so only the period tells them apart."""
    body = [f"{company} {topic}. The {topic} {what}. {company} {topic} amounted to {year % 100 + k} million. "
            + " ".join([FILLER] * 4) for k, (topic, what) in enumerate(TOPICS)]
    pages = [f"{company.upper()} HOLDINGS, INC. Annual report for the fiscal year ended December 31, {year}.",
             f"Contents. {' '.join(t for t, _ in TOPICS)}.", *body]
    nodes = [node("0001", "Cover", 1, 2)] + [node(f"{k + 2:04d}", t.title(), k + 3, k + 3)
                                             for k, (t, _) in enumerate(TOPICS)]
    document = indexed(f"{company.lower()}{year}".ljust(16, "0")[:16], f"{company.lower()}_{year}.pdf", pages, nodes)
    document.record.card = DocumentCard(issuer=f"{company.upper()} HOLDINGS, INC.", doc_type=DocType.FORM_10K,
                                        period=DocumentPeriod(fiscal_year=year, years=[year]))
    return build(document)


@pytest.fixture(scope="module")
def shelf() -> list[DocumentIndex]:
    return [_annual_report(c, y) for c in COMPANIES for y in YEARS]


def test_a_legal_name_is_written_as_people_write_it() -> None:
    assert common_name("THE BOEING COMPANY") == "Boeing"
    assert common_name("PepsiCo, Inc.") == "PepsiCo"
    assert common_name("AMERICAN WATER WORKS COMPANY, INC.") == "American Water Works"
    assert common_name("MGM Resorts International") == "MGM Resorts International"
    assert common_name("3M COMPANY") == "3M"
    assert common_name("Company") == "Company"  # a name that is only a legal form stays


def test_each_question_names_the_issuer_and_period_and_is_answered_by_its_page(shelf: list[DocumentIndex]) -> None:
    questions = shelf_questions(shelf, per_document=3)
    assert questions == shelf_questions(shelf, per_document=3)  # deterministic
    by_label = {ix.label: ix for ix in shelf}
    assert {q.doc for q in questions} == set(by_label)
    for q in questions:
        own = by_label[q.doc]
        card = own.record.card
        assert card is not None and q.self_made and q.indexes == tuple(shelf)
        assert common_name(card.issuer) in q.question and "HOLDINGS" not in q.question
        asked = question_period(q.question)
        assert (asked.fiscal_year or asked.years[-1]) == card.period.fiscal_year  # "in 2016" is a year only
        ((doc, page),) = q.gold
        assert doc == q.doc and len(own.pages[page - 1]) >= MIN_PAGE_CHARS
        topic = q.question.rsplit(" about ", 1)[1].rstrip("?").split()
        assert len(topic) >= 2 and all(word in own.pages[page - 1].lower() for word in topic)


def test_a_shelf_of_one_document_or_no_pages_asks_nothing(shelf: list[DocumentIndex]) -> None:
    assert shelf_questions(shelf[:1]) == []
    assert shelf_questions(shelf, per_document=0) == []


def test_the_documents_own_questions_teach_the_router_whose_report_and_which_year(shelf: list[DocumentIndex]) -> None:
    weights = np.array(routing_weights(shelf_questions(shelf)))
    assert weights[ROUTING_FEATURES.index("card_year")] > 0 and weights[ROUTING_FEATURES.index("card_name")] > 0
    for k in range(len(shelf)):  # questions worded unlike the ones it learned from
        company, year = COMPANIES[k // len(YEARS)], YEARS[k % len(YEARS)]
        scores = document_features(f"How large was {company}'s warranty accrual in fiscal {year}?", shelf,
                                   ALL_FEATURES) @ weights
        assert int(np.argmax(scores)) == k
