"""Routing on the document card: the issuer and the period a question names, matched to what
each document's card says it is."""

from __future__ import annotations

from services.navigator.card_match import period_matches, quarter_match, uncovered_years, year_match
from shared.model.card import DocType, DocumentCard, DocumentPeriod
from shared.model.query import QuerySettings
from shared.text.periods import question_period
from tests.support.navigation import navigate
from tests.support.query.synthetic import filing, turnover_question

ANNUAL_2019 = DocumentCard(doc_type=DocType.FORM_10K, period=DocumentPeriod(fiscal_year=2019, years=[2018, 2019]))
SECOND_QUARTER_2020 = DocumentCard(doc_type=DocType.FORM_10Q,
                                   period=DocumentPeriod(fiscal_year=2020, fiscal_quarter=2, years=[2020]))


def test_the_year_asked_matches_the_report_of_that_year_and_half_a_report_showing_it_as_comparative() -> None:
    assert year_match(ANNUAL_2019, question_period("What was the FY2019 revenue?")) == 1.0
    assert year_match(ANNUAL_2019, question_period("What was revenue in fiscal 2018?")) == 0.5
    assert year_match(ANNUAL_2019, question_period("What was revenue in FY2016?")) == 0.0
    assert year_match(None, question_period("What was the FY2019 revenue?")) == 0.0
    assert year_match(ANNUAL_2019, question_period("What was revenue?")) == 0.0


def test_of_several_years_asked_the_latest_years_report_matches_and_an_earlier_ones_half() -> None:
    annual_2020 = DocumentCard(doc_type=DocType.FORM_10K, period=DocumentPeriod(fiscal_year=2020, years=[2019, 2020]))
    asked = question_period("Did debt grow between 2020 and the 2019 fiscal period?")
    assert year_match(annual_2020, asked) == 1.0
    assert year_match(ANNUAL_2019, asked) == 0.5


def test_a_quarter_asked_matches_that_quarters_report_and_a_year_asked_the_annual_one() -> None:
    assert quarter_match(SECOND_QUARTER_2020, question_period("What was revenue in Q2 2020?")) == 1.0
    assert quarter_match(ANNUAL_2019, question_period("What was revenue in Q2 2020?")) == 0.0
    assert quarter_match(ANNUAL_2019, question_period("What was the FY2019 revenue?")) == 1.0
    assert quarter_match(SECOND_QUARTER_2020, question_period("What was the FY2020 revenue?")) == 0.0


def test_routing_on_cards_tells_two_years_of_one_company_apart() -> None:
    shelf = [filing("Pacer", 2016, "3.1"), filing("Pacer", 2017, "3.2"), filing("Lumora", 2017, "4.2")]
    years, spans = period_matches(shelf, turnover_question("Pacer", 2017))
    assert years.tolist() == [0.0, 1.0, 1.0]
    assert spans.tolist() == [1.0, 1.0, 1.0]  # every one is an annual report, as a year alone asks


def test_a_year_no_document_reports_is_named_in_a_warning() -> None:
    shelf = [filing("Pacer", 2016, "3.1"), filing("Pacer", 2017, "3.2")]
    assert uncovered_years(shelf, turnover_question("Pacer", 2030)) == [2030]
    assert uncovered_years(shelf, turnover_question("Pacer", 2017)) == []
    result = navigate(turnover_question("Pacer", 2030), shelf, QuerySettings())
    assert any("no document reports 2030" in w for w in result.warnings)
    assert not any("no document reports" in w for w in navigate(turnover_question("Pacer", 2017), shelf,
                                                                 QuerySettings()).warnings)
