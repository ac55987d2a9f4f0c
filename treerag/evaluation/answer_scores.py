"""Answers scored against the gold answer, beside the page metrics.

- A *figure question* is one whose gold answer is a single quantity ("0.66", "$1832.00",
  "65.4%"): at most `FIGURE_WORDS` words and one number that is not a date. Its answer is
  right when one of the answer's numbers states that value (`NumberMention.agrees_with`: the
  same value at the precision the answer writes, at a scale the gold leaves out, so "$1.83
  billion" and "1,832" both state "$1832.00" in millions), or, for an amount, when it is the
  gold amount at the gold's scale rounded (`states_amount`).
- An amount's scale is the one the question asks for ("Answer in USD millions"); without one,
  any of thousands, millions or billions. A table headed "in thousands" printing "5,466,312"
  states "$5466.00" asked in millions: rounded to the gold's last written digit (its trailing
  decimal zeros are format: "$4.60" is 4.6), when that keeps at least two significant digits.
  A ratio or a percentage is never rescaled: one the page does not print as such is computed.
- Any other gold answer is text, scored by token F1 (`metrics.token_f1`), and counted right
  at `TEXT_F1` or more.
- *Right answer, right page*: the question is answered, its first citation is a gold page and
  the answer is right.

The answer's citation markers ("[file.pdf, p. 3]") are removed first: they are the page, scored
on their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from shared.text.citations import strip_citations
from shared.text.numbers import NumberMention, number_mentions
from shared.text.question import asked_scale
from treerag.evaluation.metrics import token_f1, token_recall

FIGURE_WORDS = 4
TEXT_F1 = 0.5
_TABLE_SCALES = (1.0, 1e3, 1e6, 1e9)


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


def asked_scales(question: str) -> tuple[float, ...]:
    """The scales a gold amount may be written at: the one the question asks for, else any."""
    scale = asked_scale(question)
    return (scale,) if scale is not None else _TABLE_SCALES


def _written_unit(figure: NumberMention) -> float:
    """The gold's last written digit, its trailing decimal zeros aside ("4.60" -> 0.1)."""
    digits = figure.text.replace(",", "")
    decimals = digits.split(".")[1] if "." in digits else ""
    places = len(re.sub(r"\D", "", decimals).rstrip("0"))
    return 10.0 ** -places


def states_amount(mention: NumberMention, figure: NumberMention, scales: Sequence[float]) -> bool:
    """Whether `mention` (its own scale, or a table's scale it leaves out) is the gold amount
    `figure` at one of `scales`, rounded to the gold's last written digit."""
    if figure.kind != "currency" and len(scales) == len(_TABLE_SCALES):
        return False  # a plain number asked at no scale: a ratio, not an amount
    if "percent" in (mention.kind, figure.kind) or "date" in (mention.kind, figure.kind) or figure.scale != 1.0:
        return False
    unit = _written_unit(figure)
    if abs(figure.value) / unit < 10:
        return False  # one significant digit would agree with too much
    amounts = [abs(mention.value)] if mention.scale != 1.0 else [abs(mention.value) * s for s in _TABLE_SCALES]
    return any(abs(a / scale - abs(figure.value)) <= unit / 2 * (1 + 1e-9) for a in amounts for scale in scales)


def states_value(text: str, figure: NumberMention, scales: Sequence[float] = ()) -> bool:
    """Whether one of the numbers of `text` (an answer, a page) states `figure`; with `scales`
    (`asked_scales`), also as an amount at one of them, rounded (`states_amount`)."""
    return any(m.kind != "date" and (m.agrees_with(figure) or (scales and states_amount(m, figure, scales)))
               for m in number_mentions(text))


def figure_printed(gold: str, pages: Sequence[str], gold_pages: Sequence[int], question: str = "") -> bool:
    """Whether the gold answer is a figure one of its gold pages (1-based) prints: a value the
    answerer could read off the page rather than compute."""
    figure = gold_figure(gold)
    scales = asked_scales(question)
    return figure is not None and any(states_value(pages[p - 1], figure, scales)
                                      for p in gold_pages if 1 <= p <= len(pages))


def score_answer(answer: str, gold: str, question: str = "") -> AnswerScore:
    """`answer` as the answerer wrote it, citations included; `question` tells the scale a
    gold amount is written at."""
    answer = strip_citations(answer)
    f1 = round(token_f1(answer, gold), 4)
    recall = round(token_recall(answer, gold), 4)
    figure = gold_figure(gold)
    if figure is not None:
        return AnswerScore(figure=True, right=states_value(answer, figure, asked_scales(question)), f1=f1,
                           recall=recall)
    return AnswerScore(figure=False, right=f1 >= TEXT_F1, f1=f1, recall=recall)
