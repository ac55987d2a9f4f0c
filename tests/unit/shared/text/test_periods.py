"""Periods and dates in text: the same rules read a document's cover and a question, so a
question's "FY2018" meets a cover's "For the fiscal year ended December 29, 2018"."""

from __future__ import annotations

from datetime import date

import pytest

from shared.text.periods import document_period, find_dates, fiscal_year_ending, question_period, year_to_date_quarter


@pytest.mark.parametrize(
    ("question", "fiscal_year", "quarter", "period_end", "years"),
    [
        ("What is the FY2018 capital expenditure amount for Northwind?", 2018, None, None, [2018]),
        ("How did operating margin change in FY 2021?", 2021, None, None, [2021]),
        ("What was the FY22 gross margin?", 2022, None, None, [2022]),
        ("What were net sales in fiscal 2022?", 2022, None, None, [2022]),
        ("What was revenue in fiscal year 2020?", 2020, None, None, [2020]),
        ("What was the Q2 2023 operating income?", 2023, 2, None, [2023]),
        ("What was the operating income in 2023 Q3?", 2023, 3, None, [2023]),
        ("As of FY2023Q1, why was guidance raised?", 2023, 1, None, [2023]),
        ("How much cash was used in the second quarter of 2019?", 2019, 2, None, [2019]),
        ("What were third-quarter 2021 sales?", 2021, 3, None, [2021]),
        ("What was total debt as of December 31, 2020?", None, None, date(2020, 12, 31), [2020]),
        ("What was revenue for the year ended June 30, 2021?", 2021, None, date(2021, 6, 30), [2021]),
        ("What was revenue in 2019?", None, None, None, [2019]),
        ("How did revenue change between FY2019 and FY2021?", 2021, None, None, [2019, 2021]),
        ("Which debt had the largest balance in H1 FY2023?", 2023, 2, None, [2023]),
        ("How did sales grow in the first half of 2022?", None, 2, None, [2022]),
        ("What drove second-half 2021 margins?", None, 4, None, [2021]),
        ("Is the H1N1 vaccine a product?", None, None, None, []),
        ("What is the payout ratio?", None, None, None, []),
    ],
)
def test_a_question_names_its_period(
    question: str, fiscal_year: int | None, quarter: int | None, period_end: date | None, years: list[int]
) -> None:
    period = question_period(question)
    assert (period.fiscal_year, period.fiscal_quarter, period.period_end, period.years) == (
        fiscal_year, quarter, period_end, years,
    )


def test_amounts_and_counts_in_a_question_are_not_years() -> None:
    assert question_period("Is $2019 million more than 2,019 units or 2019.5 tonnes?").years == []


def test_an_annual_report_cover_gives_the_fiscal_year_of_its_end_date() -> None:
    cover = (
        "FORM 10-K\nANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\n"
        "For the fiscal year ended June 30, 2021\nor\nTRANSITION REPORT PURSUANT TO SECTION 13"
    )
    period = document_period(cover)
    assert (period.fiscal_year, period.fiscal_quarter, period.period_end) == (2021, None, date(2021, 6, 30))


def test_a_statement_heading_lists_the_years_it_covers() -> None:
    period = document_period("Consolidated Statements of Income for the years ended December 31, 2015, 2014 and 2013")
    assert period.fiscal_year == 2015 and period.years == [2013, 2014, 2015]


def test_a_year_ending_in_the_first_week_of_january_is_the_year_before() -> None:
    assert fiscal_year_ending(date(2016, 1, 3)) == 2015
    assert fiscal_year_ending(date(2030, 1, 26)) == 2030
    assert document_period("For the fiscal year ended January 2, 2021").fiscal_year == 2020


def test_a_named_fiscal_year_wins_over_the_end_dates_year() -> None:
    text = "announced its results for the first quarter (twelve weeks) of fiscal 2031, ended November 16, 2030."
    period = document_period(text)
    assert (period.fiscal_year, period.fiscal_quarter, period.period_end) == (2031, 1, date(2030, 11, 16))
    assert period.years == [2030, 2031]


@pytest.mark.parametrize(
    ("columns", "quarter"),
    [
        ("Three Months Ended Six Months Ended", 2),
        ("for the three and nine months ended September 30", 3),
        ("Twelve Weeks Ended ... Thirty-Six Weeks Ended", 3),
        ("13 Weeks Ended 26 Weeks Ended", 2),
        ("Three Months Ended March 31", 1),
        ("Six Months Ended June 30", None),  # no quarter's own column: not an interim statement
    ],
)
def test_an_interim_reports_columns_tell_its_quarter(columns: str, quarter: int | None) -> None:
    assert year_to_date_quarter(columns) == quarter


def test_a_quarterly_cover_takes_its_quarter_from_the_statement_columns() -> None:
    text = (
        "FORM 10-Q\nQUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d)\nFor the quarterly period ended July 1, 2023\n"
        "Condensed Consolidated Statements of Income\nThree and Six Months Ended July 1, 2023 and July 2, 2022"
    )
    period = document_period(text)
    assert (period.fiscal_year, period.fiscal_quarter, period.period_end) == (2023, 2, date(2023, 7, 1))


def test_a_headline_comes_before_the_footnotes_periods() -> None:
    text = (
        "Northwind Reports Second Quarter 2023 Financial Results\nNet sales rose 8%.\n"
        "1 Net earnings for the quarter ended June 26, 2022 include a charge."
    )
    period = document_period(text)
    assert (period.fiscal_year, period.fiscal_quarter) == (2023, 2)


def test_a_release_for_the_quarter_and_year_is_a_fourth_quarter() -> None:
    period = document_period("today reported results for the quarter and year ended December 31, 2022.")
    assert (period.fiscal_year, period.fiscal_quarter, period.period_end) == (2022, 4, date(2022, 12, 31))
    headline = document_period("Fourth Quarter and Full Year 2022 Results")
    assert (headline.fiscal_year, headline.fiscal_quarter) == (2022, 4)


def test_bare_years_on_a_cover_are_no_period() -> None:
    cover = "1 Main Street, Springfield\n2.625% Senior Notes Due 2026\nCopyright 2019 Northwind Inc."
    assert document_period(cover).is_empty()


def test_dates_are_read_in_the_usual_spellings() -> None:
    text = "Dec. 08, 2022; 27 November 2015; 2023-02-21; 12/8/2022; February 30, 2021; March 3rd, 2020"
    assert find_dates(text) == [date(2022, 12, 8), date(2015, 11, 27), date(2023, 2, 21), date(2020, 3, 3)]
