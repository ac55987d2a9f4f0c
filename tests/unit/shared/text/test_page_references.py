"""Each way of naming a page, parsed from the question and resolved to a physical page."""

from __future__ import annotations

import pytest

from shared.text.lexical import query_terms
from shared.text.page_references import (
    asks_about_the_document,
    find_page_mentions,
    resolve_pages,
    without_page_mentions,
)

# A 20-page document whose printed numbering starts after roman front matter: i .. iv, 1 .. 16.
LABELS = ["i", "ii", "iii", "iv", *(str(n) for n in range(1, 17))]


def pages(question: str, count: int = 20, labels: list[str] | None = None) -> list[int]:
    return list(resolve_pages(find_page_mentions(question), count, labels).pages)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the fax number on page 14?", [14]),
        ("What is the fax number on page fourteen?", [14]),
        ("Which table is on Page Twenty-One?", [21]),
        ("What does p. 3 say?", [3]),
        ("What does p.12 list?", [12]),
        ("Compare pg. 4 with the rest", [4]),
        ("What do pages 5-7 say?", [5, 6, 7]),
        ("What do pages 5 to 7 say?", [5, 6, 7]),
        ("What do pp. 5, 6 and 9 cover?", [5, 6, 9]),
        ("How many figures are there from Page 3 to Page 6?", [3, 4, 5, 6]),
        ("What does page no. 8 list?", [8]),
        ("What is on page #8?", [8]),
        ("What is on page 3 of the report?", [3]),
        ("How much did revenue grow on slide 4?", [4]),
        ("What is on slide seven?", [7]),
        ("What is on page one hundred and five?", [105]),
        ("14페이지의 내용은?", [14]),
        ("第3页写了什么?", [3]),
    ],
)
def test_printed_numbers_in_digits_and_words(question: str, expected: list[int]) -> None:
    assert pages(question, count=200) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("the name of the governor on the first page", [1]),
        ("What is on the second page?", [2]),
        ("What is on the 14th page?", [14]),
        ("What does the twenty-first page show?", [21]),
        ("What does the last page say?", [30]),
        ("What does the final page recommend?", [30]),
        ("What is on the next-to-last page?", [29]),
        ("What is on the second-to-last slide?", [29]),
        ("What is on the penultimate page?", [29]),
        ("What is on the third page from the end?", [28]),
        ("What do the first two pages say?", [1, 2]),
        ("What do the last three pages say?", [30, 29, 28]),
        ("What is on the cover?", [1]),
        ("What is on the cover page?", [1]),
        ("What is on the front page?", [1]),
        ("What is on the title page?", [1]),
        ("What is on the back cover?", [30]),
        ("What is on the inside front cover?", [2]),
    ],
)
def test_positions_count_physical_pages(question: str, expected: list[int]) -> None:
    assert pages(question, count=30) == expected


@pytest.mark.parametrize(
    "question",
    [
        "What does the policy cover?",
        "Does the warranty cover water damage?",
        "Who signed the cover letter?",
        "What is the interest cover ratio?",
        "What is the page number of the index?",
        "On which page I can find the index?",
        "How do I reset the home page?",
        "What do pages 1-200 describe?",  # a scope, not a page to look at
        "What is on page 0?",
        "List the pages with a logo, formatted like ['Page 2', 'Page 4'].",  # quoted: an example
    ],
)
def test_words_that_name_no_page(question: str) -> None:
    assert find_page_mentions(question) == []


def test_a_printed_number_reads_the_label_first_then_the_physical_page() -> None:
    assert pages("What is on page 3?", labels=LABELS) == [7]
    assert pages("What is on page iv?", labels=LABELS) == [4]
    assert pages("What is on page 18?", labels=LABELS) == [18]  # no page prints 18: the physical one
    assert pages("What is on page 3?") == [3]  # no labels: the physical page
    assert pages("What is on the 3rd page?", labels=LABELS) == [3]  # a position ignores labels


def test_a_page_beyond_the_last_is_missing_not_clamped() -> None:
    resolution = resolve_pages(find_page_mentions("What is on page 40 and the last page?"), 20)
    assert resolution.pages == (20,)
    assert [m.phrase for m in resolution.missing] == ["page 40"]
    assert resolve_pages(find_page_mentions("the 25th page"), 20).pages == ()


@pytest.mark.parametrize(
    "question",
    [
        "What is the date of the document?",
        "What is the document's date?",
        "What is the title of the report?",
        "What is the report's title?",
        "Who wrote the report?",
        "Who issued this report?",
        "Who signed it?",
        "Who is the author?",
        "Which agency published the report?",
        "When was this letter signed?",
    ],
)
def test_questions_about_the_document_itself(question: str) -> None:
    assert asks_about_the_document(question)


@pytest.mark.parametrize(
    "question",
    [
        "What is the title of section 3?",
        "What is the date of the meeting?",
        "Who wrote the foreword to chapter 2?",
        "How often are the pumps serviced?",
    ],
)
def test_questions_about_something_in_the_document(question: str) -> None:
    assert not asks_about_the_document(question)


def test_the_words_that_name_a_page_are_not_topic_terms() -> None:
    assert without_page_mentions("What is the fax number on page fourteen?") == "What is the fax number on ?"
    assert query_terms("What is the fax number on page fourteen?") == ["fax", "number"]
    assert query_terms("Which logo is on the cover page?") == ["logo"]
    assert query_terms("How do I reset the home page?") == ["reset", "home", "page"]
