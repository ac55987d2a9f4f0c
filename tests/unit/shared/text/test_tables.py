"""Figures read off a statement page: the row the question names, the column of the year it
asks about, the scale the table's heading states."""

from __future__ import annotations

from shared.text.lexical import terms
from shared.text.tables import label_figure, table_figure

BALANCE_SHEET = "\n".join([
    "NORTHWIND, INC.",
    "CONSOLIDATED BALANCE SHEETS",
    "MAY 31,",
    "(Dollars in millions) 2019 2018",
    "Cash and equivalents $ 4,466 $ 4,249",
    "Inventories 5,622 5,261",
    "Total current assets 16,525 15,134",
    "Accumulated other comprehensive income (loss) 231 (92)",
    "Revenue growth 7 % 10 % 4 %",
])


def _figure(words: str, year: int | None):
    return table_figure(BALANCE_SHEET, set(terms(words)), year, 0.5)


def test_the_asked_years_column_of_the_named_row_with_the_headings_scale() -> None:
    figure = _figure("total current assets", 2019)
    assert figure is not None and figure.statement() == (
        "$16,525 million for 2019 — Total current assets, Consolidated Balance Sheets")
    assert _figure("inventories", 2018).statement() == "$5,261 million for 2018 — Inventories, Consolidated Balance Sheets"


def test_a_figure_in_accounting_parentheses_is_negative() -> None:
    assert _figure("accumulated other comprehensive income loss", 2018).statement().startswith("-$92 million for 2018")


def test_no_cell_when_the_year_is_no_column_or_the_row_is_not_named() -> None:
    assert _figure("total current assets", 2016) is None  # the table has no 2016 column
    assert _figure("total current assets", None) is None  # two columns and no year asked
    assert _figure("goodwill impairment", 2019) is None  # no row names it
    assert _figure("revenue growth", 2019) is None  # three cells under two years: which is which is unknown


def test_a_sentence_holding_a_number_is_no_row() -> None:
    page = "(in millions) 2019 2018\nEach safety valve opens at a pressure of 12 bar.\nValves tested 14 12"
    assert table_figure(page, set(terms("safety valve pressure")), None, 0.5) is None
    assert table_figure(page, set(terms("valves tested")), 2018, 0.5).statement() == "12 million for 2018 — Valves tested"


def test_a_wrapped_sentence_ending_in_a_number_is_no_row() -> None:
    page = "Results by model size\nsupervisor sizes, students outperform their supervisors (Figure 3\nand the gap widens."
    assert table_figure(page, set(terms("figures supervisor")), None, 0.5) is None


STACKED_HEADING = "\n".join([
    "COSTLY WHOLESALE CORPORATION",
    "CONSOLIDATED",
    "BALANCE",
    "SHEETS",
    "(amounts in thousands, except par value and share data)",
    "August 29,",
    "2021",
    "August 30,",
    "2020",
    "ASSETS",
    "Total current assets 29,505 28,120",
    "Property and equipment, net 23,492 21,807",
    "TOTAL ASSETS $ 59,268,312 $ 55,556,004",
])


def _asked(question: str, year: int, page: str = STACKED_HEADING):
    found = label_figure(page, set(terms(question)), year, 0.5)
    return found[0] if found else None


def test_the_row_most_of_whose_label_the_question_holds_under_years_stacked_one_a_line() -> None:
    figure = _asked("How much total assets did the company have at the end of FY2021? Answer in USD millions.", 2021)
    assert figure is not None and figure.label == "TOTAL ASSETS" and figure.year == 2021
    assert figure.title == "Consolidated Balance Sheets"
    assert figure.statement() == "$59,268,312 thousand for 2021 — TOTAL ASSETS, Consolidated Balance Sheets"


def test_a_cell_is_stated_at_the_scale_the_question_asks() -> None:
    figure = _asked("total assets", 2020)
    assert figure is not None
    assert figure.statement(1e6).startswith("$55,556 million for 2020 — TOTAL ASSETS")
    assert figure.statement(1e9).startswith("$55.6 billion for 2020")
    assert figure.statement(1e3) == figure.statement()  # asked at the table's own scale


def test_no_row_when_the_question_holds_too_little_of_any_label() -> None:
    assert _asked("What was the company's property tax rate in 2021?", 2021) is None  # one of four terms
    assert _asked("What were total assets in 2016?", 2016) is None  # no 2016 column
