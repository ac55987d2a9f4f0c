"""Follow-up questions completed from the question before them: periods, names, subjects and
pronouns carried over; a question that stands alone is left as it is."""

from __future__ import annotations

import pytest

from shared.app.chats import follow
from shared.text.followups import standalone

CAPEX = "What is the FY2018 capital expenditure amount for 3M?"
INCOME = "What was Apple's net income in 2019?"
CODE = "What does the lapply function return?"


@pytest.mark.parametrize(("previous", "question", "expected"), [
    (CAPEX, "And in 2017?", "What is the FY2017 capital expenditure amount for 3M?"),
    (CAPEX, "And 2016?", "What is the FY2016 capital expenditure amount for 3M?"),
    (CAPEX, "in fiscal 2020", "What is the fiscal 2020 capital expenditure amount for 3M?"),
    (CAPEX, "what about Nike?", "What is the FY2018 capital expenditure amount for Nike?"),
    (CAPEX, "What about PepsiCo in FY2021?", "What is the FY2021 capital expenditure amount for PepsiCo?"),
    (CAPEX, "and the operating margin?", "What is the FY2018 operating margin for 3M?"),
    (CAPEX, "What is its revenue?", "What is 3M's revenue in FY2018?"),
    (INCOME, "And Microsoft?", "What was Microsoft's net income in 2019?"),
    (INCOME, "And in 2020?", "What was Apple's net income in 2020?"),
    (INCOME, "what about revenue?", "What was Apple's revenue in 2019?"),
    (CODE, "And sapply?", "What does the sapply function return?"),
    ("At what pressure does the safety valve of unit 303 open?", "And the coolant pump?",
     "At what pressure does the coolant pump of unit 303 open?"),
])
def test_a_follow_up_is_the_question_before_it_completed(previous: str, question: str, expected: str) -> None:
    rewrite = standalone(question, previous)
    assert rewrite.question == expected
    assert rewrite.rewritten and rewrite.reason


def test_a_pronoun_with_nothing_to_name_it_keeps_the_question_before_it_beside() -> None:
    rewrite = standalone("What arguments does it take?", CODE)
    assert rewrite.question.startswith("What arguments does it take?") and CODE in rewrite.question


@pytest.mark.parametrize("question", [
    "What is the total revenue of Adobe in 2019?",
    "Which R function reads a CSV file into a data frame?",
])
def test_a_question_that_stands_alone_is_asked_as_written(question: str) -> None:
    rewrite = standalone(question, CAPEX)
    assert rewrite.question == question and not rewrite.rewritten


def test_the_first_question_of_a_conversation_is_asked_as_written() -> None:
    assert standalone("  And in 2017?  ", None).question == "And in 2017?"


def test_the_previous_answers_documents_stay_in_scope_unless_the_follow_up_names_others() -> None:
    same = follow("What is its revenue?", CAPEX, ["3m-2018"], thread_docs=[])
    assert same.doc_ids == ["3m-2018"]
    other_company = follow("What about Nike?", CAPEX, ["3m-2018"], thread_docs=[])
    assert other_company.doc_ids == []  # the thread's documents: all of the tenant's
    other_year = follow("And in 2015?", CAPEX, ["3m-2018"], thread_docs=["3m-2018", "3m-2015"])
    assert other_year.doc_ids == ["3m-2018", "3m-2015"]


def test_hostile_input_is_rewritten_in_bounded_time() -> None:
    long_question = "and " + "the same table of it " * 2000 + "?"
    rewrite = standalone(long_question, CAPEX * 50)
    assert len(rewrite.question) < 3 * (len(long_question) + len(CAPEX * 50))


def test_a_long_chain_of_follow_ups_carries_a_bounded_context() -> None:
    previous = "At what pressure does the safety valve of unit 303 open?"
    for _ in range(50):
        previous = standalone("and how is it tested?", previous).question
    assert "safety valve" not in previous or len(previous) < 400
    assert len(previous) < 400
