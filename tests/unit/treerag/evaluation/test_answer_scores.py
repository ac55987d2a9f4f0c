"""Answers scored against the gold answer: a figure is right when the answer states its value
(at any scale a table leaves out, at the precision the answer writes); text by token F1."""

from __future__ import annotations

from treerag.evaluation.answer_scores import TEXT_F1, figure_printed, gold_figure, score_answer
from treerag.evaluation.crossval import Outcome, summarise


def test_a_short_gold_answer_with_one_quantity_is_a_figure() -> None:
    assert gold_figure("$1832.00") is not None and gold_figure("65.4%") is not None
    assert gold_figure("0.66") is not None
    assert gold_figure("March 3, 2021") is None  # a date is no figure
    assert gold_figure("No, working capital was negative at -$1561M in FY 2022.") is None  # a sentence


def test_a_figure_is_right_when_the_answer_states_its_value() -> None:
    assert score_answer("Purchases of PP&E were $1,832 million [10K.pdf, p. 60].", "$1832.00").right
    assert score_answer("Capital expenditure was $1.8 billion.", "$1832.00").right  # rounded, two digits kept
    assert score_answer("The ratio is 0.66 [10K.pdf, p. 59].", "0.66").right
    assert not score_answer("The ratio is 0.7.", "0.66").right  # one digit vouches for too little
    assert not score_answer("Revenue grew 65.4 million.", "65.4%").right  # a percent is not an amount
    assert not score_answer("See page 60 [10K.pdf, p. 1832].", "$1832.00").right  # the citation is no answer


def test_a_figure_is_printed_when_a_gold_page_states_it_at_the_tables_scale() -> None:
    pages = ["Cover", "Purchases of property, plant and equipment (in millions) 1,577 1,373", "Notes"]
    assert figure_printed("$1577.00", pages, [2])
    assert not figure_printed("$1577.00", pages, [1, 3])  # printed, but not on a gold page
    assert not figure_printed("0.66", pages, [2])  # a ratio computed from the page, not printed
    assert not figure_printed("Capex rose to $1,577 million in 2018.", pages, [2])  # no figure question


def test_an_amount_asked_at_another_scale_is_printed_when_the_page_rounds_to_it() -> None:
    thousands = ["(in thousands, except per share data) Total current liabilities 5,466,312 4,586,657"]
    asked = "What is the year end FY2017 total current liabilities (in USD millions)?"
    assert figure_printed("$5466.00", thousands, [1], asked)
    assert not figure_printed("$5467.00", thousands, [1], asked)  # not the page's figure at any rounding
    millions = ["(in millions) Capital spending (4,625) (4,240) (4,232)"]
    assert figure_printed("$4.60", millions, [1], "What is the capital expenditure (in USD billions)?")  # 4.6
    # One significant digit ("$0.40" is 0.4) would agree with a tenth of all numbers.
    assert not figure_printed("$0.40", ["(In millions) Dividends paid (389) (353)"], [1], "in USD billions?")
    # A ratio is never rounded from another scale: "1.73" is not "1,731" in thousands.
    assert not figure_printed("1.73", ["(in thousands) Total current assets 1,731"], [1], "Round to two places.")
    assert figure_printed("$1.73", ["(in thousands) Total current assets 1,731"], [1], "in USD millions?")


def test_an_answer_states_an_amount_at_the_tables_scale() -> None:
    asked = "What is Netflix's year end FY2017 total current liabilities (in USD millions)?"
    assert score_answer("$5,466,312 thousand for 2017 — Total current liabilities", "$5466.00", asked).right
    assert score_answer("$5,466 million for 2017 — Total current liabilities", "$5466.00", asked).right
    assert not score_answer("$4,586,657 thousand for 2016 — Total current liabilities", "$5466.00", asked).right


def test_a_text_answer_is_scored_by_token_f1_without_its_citations() -> None:
    gold = "Boeing forecasts an increase in the production rates for the 737, 777X and 787 aircrafts in 2023."
    close = score_answer("Boeing forecasts higher production rates for the 737, 777X and 787 in 2023 [b.pdf, p. 4].",
                         gold)
    assert not close.figure and close.f1 >= TEXT_F1 and close.right
    far = score_answer("Revenue is recognised when control passes to the customer [b.pdf, p. 9].", gold)
    assert far.f1 < TEXT_F1 and not far.right


def _outcome(item_id: str, answer: str, gold_answer: str, cited: list[tuple[str, int]]) -> Outcome:
    return Outcome(system="treerag-auto", item_id=item_id, collection="filings", type="factual", fold=0,
                   answerable=True, abstained=not answer, ranked=cited, context=cited, cited=cited,
                   gold=[("a.pdf", 3)], context_tokens=10, latency_ms=1.0, answer=answer, gold_answer=gold_answer)


def test_the_summary_counts_figures_stated_and_right_answers_on_gold_pages() -> None:
    printed = _outcome("q1", "It was $1,832 million [a.pdf, p. 3].", "$1832.00", [("a.pdf", 3)])
    printed.figure_printed = True
    summary = summarise([
        printed,
        _outcome("q1b", "It was $1,832 million [a.pdf, p. 3].", "$1832.00", [("a.pdf", 3)]),  # right, right page
        _outcome("q2", "It was $1,832 million [a.pdf, p. 9].", "$1832.00", [("a.pdf", 9)]),  # right, wrong page
        _outcome("q3", "", "0.66", []),  # refused
        _outcome("q4", "The tax rate rose from 20% to 23% [a.pdf, p. 3].", "The tax rate rose from 20% to 23%.",
                 [("a.pdf", 3)]),
    ])
    assert summary.figure_questions == 4 and summary.value_in_answer == 0.75
    assert summary.printed_figures == 1 and summary.value_in_answer_printed == 1.0
    assert summary.answer_f1 == 1.0
    assert summary.right_answer_right_page == 0.6
