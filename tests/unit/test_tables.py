"""Figures read off a statement page: the row the question names, the column of the year it
asks about, the scale the table's heading states."""

from __future__ import annotations

from shared.text.lexical import terms
from shared.text.tables import table_figure

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
    assert figure is not None and figure.statement() == "$16,525 million for 2019 — Total current assets"
    assert _figure("inventories", 2018).statement() == "$5,261 million for 2018 — Inventories"


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
