"""Answers scored against the gold answer, beside the page metrics.

- A *figure question* is one whose gold answer is a single quantity ("0.66", "$1832.00",
  "65.4%"): at most `FIGURE_WORDS` words and one number that is not a date. Its answer is
  right when one of the answer's numbers states that value (`NumberMention.agrees_with`: the
  same value at the precision the answer writes, at a scale the gold leaves out, so "$1.83
  billion" and "1,832" both state "$1832.00" in millions).
- Any other gold answer is text, scored by token F1 (`metrics.token_f1`), and counted right
  at `TEXT_F1` or more.
- *Right answer, right page*: the question is answered, its first citation is a gold page and
  the answer is right.

The answer's citation markers ("[file.pdf, p. 3]") are removed first: they are the page, scored
on their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from shared.text.citations import strip_citations
from shared.text.numbers import NumberMention, number_mentions
from treerag.evaluation.metrics import token_f1, token_recall

FIGURE_WORDS = 4
TEXT_F1 = 0.5


class AnswerScore(BaseModel):
    figure: bool  # the gold answer is one quantity
    right: bool  # the value stated (figure) or token F1 at least TEXT_F1 (text)
    f1: float
    recall: float = 0.0  # share of the gold answer's tokens the answer holds

    def holds(self) -> bool:
        """The answer states the gold value (figure) or holds at least TEXT_F1 of the gold
        answer's tokens (text): a sentence that contains the answer, whatever else it says."""
        return self.right or (not self.figure and self.recall >= TEXT_F1)


def gold_figure(gold: str) -> NumberMention | None:
    """The gold answer's one quantity, when the gold answer is nothing more."""
    if len(gold.split()) > FIGURE_WORDS:
        return None
    numbers = [m for m in number_mentions(gold) if m.kind != "date"]
    return numbers[0] if len(numbers) == 1 else None


def states_value(text: str, figure: NumberMention) -> bool:
    """Whether one of the numbers of `text` (an answer, a page) states `figure`."""
    return any(m.kind != "date" and m.agrees_with(figure) for m in number_mentions(text))


def figure_printed(gold: str, pages: Sequence[str], gold_pages: Sequence[int]) -> bool:
    """Whether the gold answer is a figure one of its gold pages (1-based) prints: a value the
    answerer could read off the page rather than compute."""
    figure = gold_figure(gold)
    return figure is not None and any(states_value(pages[p - 1], figure) for p in gold_pages if 1 <= p <= len(pages))


def score_answer(answer: str, gold: str) -> AnswerScore:
    """`answer` as the answerer wrote it, citations included."""
    answer = strip_citations(answer)
    f1 = round(token_f1(answer, gold), 4)
    recall = round(token_recall(answer, gold), 4)
    figure = gold_figure(gold)
    if figure is not None:
        return AnswerScore(figure=True, right=states_value(answer, figure), f1=f1, recall=recall)
    return AnswerScore(figure=False, right=f1 >= TEXT_F1, f1=f1, recall=recall)
