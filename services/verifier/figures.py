"""The figure an answer leads with, when the question asks for one a table row prints.

A question for a figure ("How much total assets did Costco have at the end of FY2021? Answer in
USD millions.") is answered by a statement row most of whose label the question holds ("TOTAL
ASSETS"); the column of the period it asks about gives the cell, the table's heading its scale,
the title above the table the statement. The answer then leads with "$59,268 million for 2021 —
TOTAL ASSETS, Consolidated Balance Sheets", and the verifier checks that sentence against the
page like any other.

No cell answers a question that asks for something computed from cells: a ratio, a margin, a
growth rate, an average, or a measure the question defines itself ("Define net working capital
as ..."), unless the row's label names that measure. A yes/no question is answered by the
sentence that states it, never by a cell, and so is a "which" question (a choice among rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shared.model.query import Passage
from shared.text.lexical import query_terms, terms
from shared.text.names import named_words
from shared.text.numbers import number_mentions
from shared.text.periods import period_spans, question_period
from shared.text.question import asked_text, asks_for_quantity, is_which, is_yes_no
from shared.text.tables import TableFigure, label_figure

# A row answers when the question holds at least this share of its label's terms (and two of
# them, unless the label is one word): most of what the row is about is what the question asks.
FIGURE_LABEL_SHARE = 0.5
# The context's best pages read for such a row: the pages the answer cites anyway, and the few
# after them where a statement's page often ranks below the discussion of it.
FIGURE_PAGES = 4
# Measures computed from several cells: a row holds one only when its label names it.
_COMPUTED = frozenset(terms("ratio margin growth average change cagr percentage percent turnover days"))
# A measure the question defines or writes as a formula of others.
_DEFINES = re.compile(
    r"\b(?:define[ds]?|calculated?|computed?)\b[^.?]*\b(?:as|using|by)\b|\w\s[+−]\s\w|\b(?:plus|minus)\b", re.IGNORECASE
)


def topic_words(question: str) -> set[str]:
    """The question's index terms less its names and the words of its periods."""
    asked = asked_text(question)
    names = {t for t, _ in named_words(asked)}
    periods = {t for start, end in period_spans(asked) for t in terms(asked[start:end])}
    return set(query_terms(asked)) - names - periods


def _computed(question: str) -> set[str]:
    """The words naming a computed measure the question asks for ("%" counts as "percent")."""
    asked = asked_text(question)
    found = set(terms(asked)) & _COMPUTED
    return found | ({"percent"} if "%" in asked else set())


def _pages(passages: list[Passage], count: int) -> list[tuple[Passage, int]]:
    seen: dict[tuple[str, int], Passage] = {}
    for passage in passages:
        for page in passage.pages:
            seen.setdefault((passage.doc_id, page), passage)
    return [(passage, page) for (_, page), passage in seen.items()][:count]


def figure_lead(
    question: str, passages: list[Passage], page_text: Callable[[str, int], str | None] | None,
    label_share: float = FIGURE_LABEL_SHARE, pages: int = FIGURE_PAGES,
) -> tuple[TableFigure, Passage, int] | None:
    """The cell the answer leads with, the passage and page it is read from; None for a yes/no
    or a "which" question (a choice among rows: "Which segment grew most?"), for a computed
    quantity, or when no row of the first `pages` pages of the context qualifies at
    `label_share` (a question that does not say it asks for a quantity must name the period of
    the cell's column). Of several pages' rows, the one holding most of the question wins,
    then the better-ranked page."""
    if page_text is None or is_yes_no(question) or is_which(question):
        return None
    if _DEFINES.search(question):
        return None  # the question defines its own measure: computed, not printed
    wanted = topic_words(question)
    if not wanted:
        return None
    computed = _computed(question)
    year = question_period(question).latest_year()
    quantity = asks_for_quantity(question)
    best: tuple[tuple[int, float, int], TableFigure, Passage, int] | None = None
    for rank, (passage, page) in enumerate(_pages(passages, pages)):
        text = page_text(passage.doc_id, page)
        found = label_figure(text, wanted, year, label_share) if text else None
        if found is None:
            continue
        figure, match = found
        if computed - set(terms(figure.label)):
            continue  # a ratio or growth rate asked; the row holds one of its parts
        if figure.year is None and not figure.scale:
            continue  # no period column, no stated scale: as likely a page number or a count of a list
        if not quantity and (year is None or figure.year != year):
            continue  # "What were the FY2019 total current assets?" asks for a figure by its period
        key = (match.matched, match.label_share, -rank)
        if best is None or key > best[0]:
            best = (key, figure, passage, page)
    return None if best is None else (best[1], best[2], best[3])


def figure_stated(question: str, lead: TableFigure | None, sentences: list[str]) -> bool:
    """Whether the answer states what a question for a quantity asks: a cell was read, or, for
    a quantity that is not computed from others, a sentence states a quantity at all (the
    asked years aside). A computed one is stated only by a row that names it: the cell. A
    question for no quantity is answered by its sentences."""
    if lead is not None or not asks_for_quantity(question):
        return True
    if _DEFINES.search(question) or _computed(question):
        return False  # computed from figures no single sentence gives
    asked_years = set(question_period(question).years)
    return any(m.kind != "date" and not (m.kind == "plain" and m.value in asked_years)
               for sentence in sentences for m in number_mentions(sentence))
