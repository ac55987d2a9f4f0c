"""A question for a figure a table prints gets the figure first: value, scale, year and row,
cited on its page and checked like any sentence; a yes/no question gets a sentence."""

from __future__ import annotations

from services.verifier.answer import answer_question
from shared.model.query import CompressedContext, Passage, QuerySettings
from tests.unit.shared.text.test_tables import BALANCE_SHEET

PAGES = {3: "Northwind sells footwear and apparel through retailers and its own stores.", 4: BALANCE_SHEET}


def _ask(question: str):
    passage = Passage(doc_id="n" * 16, file_name="northwind_2019.pdf", node_id="0004", title="Balance sheets",
                      pages=[4], text=BALANCE_SHEET, score=1.0)
    context = CompressedContext(question=question, passages=[passage], tokens_before=100, tokens_after=100)
    return answer_question(context, QuerySettings(), "dfs", page_text=lambda doc, page: PAGES.get(page))


def test_a_figure_question_is_answered_with_the_cell_first() -> None:
    answer = _ask("What were Northwind's FY2019 total current assets?")
    assert answer.answer.startswith(
        "$16,525 million for 2019 — Total current assets, Consolidated Balance Sheets [northwind_2019.pdf, p. 4]")
    assert answer.sentences[0].verdict == "supported" and not answer.abstained


def test_a_figure_asked_at_another_scale_is_stated_at_it() -> None:
    answer = _ask("How much did Northwind hold in inventories at the end of FY2018? Answer in USD billions.")
    assert answer.answer.startswith("$5.26 billion for 2018 — Inventories")
    assert answer.sentences[0].verdict == "supported"


def test_a_computed_measure_or_a_which_question_is_not_answered_with_one_cell() -> None:
    for question in (
        "What is Northwind's FY2019 current ratio? Define it as total current assets divided by total current "
        "liabilities.",
        "What was Northwind's FY2019 inventory growth rate?",
        "Which of cash or inventories was the larger current asset in FY2019?",
    ):
        assert not _ask(question).answer.startswith("$"), question


def test_a_yes_no_question_is_not_answered_with_a_cell() -> None:
    answer = _ask("Did Northwind's total current assets grow in FY2019?")
    assert not answer.answer.startswith("$")


def test_an_answer_says_when_no_passage_states_the_figure_asked_for() -> None:
    assert _ask("What were Northwind's FY2019 total current assets?").stated  # the cell states it
    assert _ask("What does Northwind sell?").stated  # no figure asked: the sentences answer
    computed = _ask("What is Northwind's FY2019 current ratio? Define it as total current assets divided by total "
                    "current liabilities.")
    assert not computed.stated and not computed.abstained  # the closest passages, shown as such


def test_the_command_line_shows_closest_passages_under_that_name() -> None:
    from treerag.commands.ask import NOT_STATED, render
    from treerag.pipeline import AskResult

    answer = _ask("What is Northwind's FY2019 current ratio? Define it as total current assets divided by total "
                  "current liabilities.")
    fields = AskResult.model_fields
    result = AskResult.model_validate({
        "answer": answer, "stats": fields["stats"].annotation(), "mode": "dfs", "mode_reason": "test",
        "tokens_before": 1, "tokens_after": 1, "timings": fields["timings"].annotation(),
    })
    assert render(result).startswith(NOT_STATED + "\n" + answer.answer)


LONG = ("Northwind ships every order from its regional warehouses, which it opened in 2015 after the old central "
        "depot closed, and it keeps a reserve stock of each line of footwear and apparel there, so that a retailer "
        "who runs short can be resupplied within two days, whatever the season and whatever the size of the order.")


def _ask_prose(question: str, text: str):
    passage = Passage(doc_id="p" * 16, file_name="northwind_ops.pdf", node_id="0002", title="Operations",
                      pages=[2], text=text, score=1.0)
    context = CompressedContext(question=question, passages=[passage], tokens_before=100, tokens_after=100)
    return answer_question(context, QuerySettings(), "dfs", page_text=lambda doc, page: text)


def test_a_yes_no_question_is_answered_by_the_whole_sentence_that_states_it() -> None:
    assert len(LONG.split()) > 50  # longer than a sentence the answer would otherwise cut to its best clauses
    answer = _ask_prose("Does Northwind keep a reserve stock in its regional warehouses?", LONG)
    assert answer.answer.startswith(LONG) and "…" not in answer.answer
    cut = _ask_prose("How does Northwind resupply a retailer who runs short of stock?", LONG)
    assert "…" in cut.answer  # a how-question gets the clauses that answer it


def test_a_further_sentence_is_added_only_when_it_adds_what_the_question_asks() -> None:
    text = ("Northwind keeps a reserve stock in its regional warehouses. Northwind's regional warehouses hold the "
            "reserve stock of footwear, apparel, bags and hats for retailers.")
    answer = _ask_prose("Does Northwind keep a reserve stock in its regional warehouses?", text)
    assert answer.answer.startswith("Northwind keeps a reserve stock") and "footwear" not in answer.answer
    answer = _ask_prose("Does Northwind keep a reserve stock in its regional warehouses for retailers?", text)
    assert "footwear" in answer.answer  # it adds the retailers the question asks about
