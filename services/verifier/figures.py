"""The figure an answer leads with, when the question asks for one a table row prints.

A question for a figure ("What were Nike's FY2019 total current assets?") is answered by a
statement row whose label holds its topic words; the column of the period it asks about gives
the cell, the table's heading its scale. The answer then leads with "$16,525 million for 2019
— Total current assets", and the verifier checks that sentence against the page like any other.
A yes/no question is answered by the sentence that states it, never by a cell.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shared.model.query import Passage
from shared.text.lexical import query_terms, terms
from shared.text.names import named_words
from shared.text.periods import period_spans, question_period
from shared.text.question import asked_text
from shared.text.tables import TableFigure, table_figure

# A row answers when its label holds at least this share of the question's topic words (its
# names and periods aside): the row is what the question asks about, not a row sharing a word.
FIGURE_ROW_SHARE = 0.5
# The best passages whose pages are read for such a row: the pages the answer cites anyway.
FIGURE_PASSAGES = 2
_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.IGNORECASE
)


def topic_words(question: str) -> set[str]:
    """The question's index terms less its names and the words of its periods."""
    asked = asked_text(question)
    names = {t for t, _ in named_words(asked)}
    periods = {t for start, end in period_spans(asked) for t in terms(asked[start:end])}
    return set(query_terms(asked)) - names - periods


def figure_lead(
    question: str, passages: list[Passage], page_text: Callable[[str, int], str | None] | None,
) -> tuple[TableFigure, Passage, int] | None:
    """The cell the answer leads with, the passage and page it is read from; None when the
    question is a yes/no one, names no topic beyond its names and period, or no row of the best
    passages' pages qualifies."""
    if page_text is None or _YES_NO.match(asked_text(question)):
        return None
    wanted = topic_words(question)
    if not wanted:
        return None
    year = question_period(question).latest_year()
    for passage in passages[:FIGURE_PASSAGES]:
        for page in passage.pages:
            text = page_text(passage.doc_id, page)
            found = table_figure(text, wanted, year, FIGURE_ROW_SHARE) if text else None
            if found is not None:
                return found, passage, page
    return None
