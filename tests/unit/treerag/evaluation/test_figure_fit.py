"""The figure reader's thresholds chosen on the training folds: the pair that leads with the most
right cells less wrong ones there, judged on the held-out fold."""

from __future__ import annotations

from tests.unit.shared.text.test_tables import BALANCE_SHEET
from treerag.evaluation.figure_fit import FigureCase, fit_figures

PROSE = "Northwind sells footwear and apparel through retailers and its own stores."
PAGES = {("statements.pdf", 1): PROSE, ("statements.pdf", 2): BALANCE_SHEET}


def _text(name: str, page: int) -> str | None:
    return PAGES.get((name, page))


def test_the_training_folds_choose_the_reader_that_finds_the_statement_page_below_the_first() -> None:
    # The statement page ranks second: a reader of the first page only finds no cell.
    asked = "How much were Northwind's total current assets at the end of FY2019? Answer in USD millions."
    cases = [FigureCase(group, asked, "$16525.00", (("statements.pdf", 1), ("statements.pdf", 2)))
             for group in ("a", "b")]
    fit = fit_figures(cases, _text)
    for held_out in fit.held_out.values():
        assert held_out.chosen[1] >= 2 and held_out.chosen_leads.right == 1 and held_out.chosen_leads.wrong == 0


def test_a_cell_led_for_a_text_answer_counts_against_the_reader() -> None:
    asked = "How much did Northwind hold in inventories at the end of FY2019?"
    cases = [FigureCase("a", asked, "Inventories are stated at the lower of cost and market.",
                        (("statements.pdf", 2),))]
    fit = fit_figures(cases, _text)
    assert fit.held_out["a"].shipped_leads.wrong == 1 and fit.held_out["a"].shipped_leads.right == 0
