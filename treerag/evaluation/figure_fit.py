"""The figure reader's two thresholds fitted on training folds, judged on the held-out one.

`services/verifier/figures.py` leads an answer with a table cell when a row's label is held by
the question at `label_share` or more, on the context's first `pages` pages. Each pair of a
small grid is scored on the answered questions of a held-out run (their contexts as the run
handed them to the answerer):

- a *right lead*: the cell states the gold figure (`answer_scores.states_value`, at the scale
  the question asks);
- a *wrong lead*: a cell is led with and does not state it (a text gold answer included: a
  cell answers no text question).

A pair scores right leads minus wrong leads. For each fold (a collection, or a fold of
documents) the pair scoring best on the other folds is chosen (ties: the larger share, then the
fewer pages: the reader that leads least) and its leads on the held-out fold are reported; the
shipped pair is reported beside it, on every fold. Held out by collection, a collection without
statement tables (manuals, papers) cannot tell the pairs apart: every pair ties at no lead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from services.verifier.figures import FIGURE_LABEL_SHARE, FIGURE_PAGES, figure_lead
from shared.model.query import Passage
from shared.text.question import asked_scale
from treerag.evaluation.answer_scores import asked_scales, gold_figure, states_value

LABEL_SHARES = (0.34, 0.5, 0.67, 1.0)
PAGE_COUNTS = (1, 2, 4, 6)


@dataclass(frozen=True)
class FigureCase:
    """One answered question: its fold, gold answer and the context's pages, in order."""

    group: str  # the fold it is held out in
    question: str
    gold: str
    pages: tuple[tuple[str, int], ...]  # (file name, page)


class Leads(BaseModel):
    right: int = 0
    wrong: int = 0

    @property
    def score(self) -> int:
        return self.right - self.wrong


class HeldOut(BaseModel):
    chosen: tuple[float, int]  # (label share, pages) fitted on the other collections
    chosen_leads: Leads
    shipped_leads: Leads


class FigureFit(BaseModel):
    grid: list[tuple[float, int]]
    shipped: tuple[float, int]
    fitted_on_all: tuple[float, int]
    held_out: dict[str, HeldOut]


PageText = Callable[[str, int], "str | None"]


def _leads(cases: Sequence[FigureCase], page_text: PageText, share: float, pages: int) -> Leads:
    leads = Leads()
    for case in cases:
        passages = [Passage(doc_id=name, file_name=name, node_id="", title="", pages=[page], text="", score=1.0)
                    for name, page in case.pages]
        found = figure_lead(case.question, passages, page_text, label_share=share, pages=pages)
        if found is None:
            continue
        figure = gold_figure(case.gold)
        said = found[0].statement(asked_scale(case.question))
        if figure is not None and states_value(said, figure, asked_scales(case.question)):
            leads.right += 1
        else:
            leads.wrong += 1
    return leads


def _best(scores: dict[tuple[float, int], Leads]) -> tuple[float, int]:
    return max(scores, key=lambda pair: (scores[pair].score, pair[0], -pair[1]))


def fit_figures(cases: Sequence[FigureCase], page_text: PageText) -> FigureFit:
    grid = [(share, pages) for share in LABEL_SHARES for pages in PAGE_COUNTS]
    groups = sorted({c.group for c in cases})
    by_group = {name: {pair: _leads([c for c in cases if c.group == name], page_text, *pair) for pair in grid}
                for name in groups}

    def summed(names: Sequence[str], pair: tuple[float, int]) -> Leads:
        return Leads(right=sum(by_group[n][pair].right for n in names),
                     wrong=sum(by_group[n][pair].wrong for n in names))

    shipped = (FIGURE_LABEL_SHARE, FIGURE_PAGES)
    held_out = {}
    for name in groups:
        chosen = _best({pair: summed([n for n in groups if n != name], pair) for pair in grid})
        shipped_leads = by_group[name].get(shipped) or _leads([c for c in cases if c.group == name], page_text,
                                                               *shipped)
        held_out[name] = HeldOut(chosen=chosen, chosen_leads=by_group[name][chosen], shipped_leads=shipped_leads)
    return FigureFit(grid=grid, shipped=shipped, fitted_on_all=_best({p: summed(groups, p) for p in grid}),
                     held_out=held_out)
