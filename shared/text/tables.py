"""Figures read off a page's table rows: the row a question names, the column of the period it
asks about, and the scale the table's heading states.

A statement page keeps one printed line per row ("Total current assets 16,525 15,134") under a
line of column years ("(Dollars in millions) 2019 2018"). A row's label is its text before the
first figure. Its cells are its figures, laid against the nearest line above that prints as
many years: the years are the columns. A row has a neighbour row with as many cells: a table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.text.lexical import terms
from shared.text.numbers import NumberMention, number_mentions
from shared.text.periods import bare_years

# "(Dollars in millions)", "(in thousands, except per share data)", "amounts in millions".
_SCALE = re.compile(r"\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)
_SCALE_WORD = {"thousands": "thousand", "millions": "million", "billions": "billion"}
_CURRENCY = re.compile(r"\$|\bdollars\b|\bUSD\b", re.IGNORECASE)
# How far above a row (lines) its column years may stand: a statement's heading, not another table's.
_HEADER_LINES = 40
_NEIGHBOUR_LINES = 2


@dataclass(frozen=True)
class TableFigure:
    """One cell: the row's label, the value as printed, its column year, the table's scale."""

    label: str
    printed: str
    year: int | None
    scale: str  # "million", "thousand", "billion" or ""
    currency: bool
    line: str  # the row as printed

    def statement(self) -> str:
        """The cell as an answer leads with it: "$16,525 million for 2019 — Total current assets"."""
        value = self.printed.replace("$", "").replace(" ", "")
        negative = value.startswith("(") and value.endswith(")")
        value = value.strip("()")
        amount = ("-" if negative else "") + ("$" if self.currency else "") + value
        scaled = f"{amount} {self.scale}" if self.scale else amount
        # "for 2019", not "(2019)": a figure in parentheses reads as a negative one, and
        # "FY2019" as a name the page must print.
        when = f" for {self.year}" if self.year is not None else ""
        return f"{scaled}{when} — {self.label}"


# What may stand between and after a row's cells: currency signs, parentheses, dashes, percent
# signs and note marks; a word there ("12 bar.") makes the line prose, not a row.
_BETWEEN_CELLS = re.compile(r"[\s$€£()%—–\-*,.]*")


def _cells(line: str) -> tuple[str, list[NumberMention]]:
    """The row's label and its figures; no figures when the line is not a row (prose, or a line
    whose figures are not all at its end)."""
    mentions = [m for m in number_mentions(line) if m.kind != "date"]
    if not mentions:
        return line, []
    gaps = [line[a.end : b.start] for a, b in zip(mentions, mentions[1:], strict=False)] + [line[mentions[-1].end :]]
    if not all(_BETWEEN_CELLS.fullmatch(gap) for gap in gaps):
        return line, []
    label = line[: mentions[0].start].strip(" $:.(")
    return label, mentions


def _in_a_table(lines: list[str], row: int, columns: int) -> bool:
    """Whether a line next to the row (`_NEIGHBOUR_LINES` either side) is a row with as many
    cells: a table has rows; a wrapped sentence ending in a number ("... (Figure 3") has none."""
    near = range(max(0, row - _NEIGHBOUR_LINES), min(len(lines), row + _NEIGHBOUR_LINES + 1))
    for k in near:
        if k != row:
            label, cells = _cells(lines[k])
            if label and len(cells) == columns:
                return True
    return False


def _column_years(lines: list[str], row: int, columns: int) -> list[int] | None:
    for k in range(row - 1, max(-1, row - 1 - _HEADER_LINES), -1):
        # A line of column years holds little else: months, days, the words of a heading.
        years = bare_years(lines[k])
        if len(years) == columns and len(re.sub(r"[^A-Za-z]", "", lines[k])) <= 40:
            return years
    return None


def _scale(lines: list[str], row: int) -> tuple[str, bool]:
    """The scale and currency the nearest heading above the row states."""
    for k in range(row - 1, max(-1, row - 1 - _HEADER_LINES), -1):
        found = _SCALE.search(lines[k])
        if found:
            return _SCALE_WORD[found.group(1).lower()], bool(_CURRENCY.search(lines[k]))
    return "", False


def _printed(line: str, mention: NumberMention) -> str:
    text = line[mention.start : mention.end].strip()
    if mention.start > 0 and line[mention.start - 1] == "(" and line[mention.end : mention.end + 1] == ")":
        text = f"({text})"  # accounting parentheses: a negative figure
    return text


def table_figure(page: str, wanted: set[str], year: int | None, min_share: float) -> TableFigure | None:
    """The cell of the row whose label holds the most of `wanted` (index terms; at least
    `min_share` of them), in the column of `year` (the only cell when the row has one); None
    when no row qualifies or its columns do not say which year each is."""
    if not wanted:
        return None
    lines = page.split("\n")
    best: tuple[float, int, str, list[NumberMention]] | None = None
    for k, line in enumerate(lines):
        label, cells = _cells(line)
        if not cells or not label:
            continue
        share = len(wanted & set(terms(label))) / len(wanted)
        if share >= min_share and (best is None or share > best[0]):
            best = (share, k, label, cells)
    if best is None:
        return None
    _, row, label, cells = best
    if not _in_a_table(lines, row, len(cells)):
        return None
    years = _column_years(lines, row, len(cells))
    column_year: int | None
    if years is not None and year in years:
        cell, column_year = cells[years.index(year)], year
    elif len(cells) == 1 and (years is None or year is None):
        cell, column_year = cells[0], years[0] if years else None
    else:
        return None
    scale, currency = _scale(lines, row)
    currency = currency or "$" in lines[row]
    if cell.kind == "percent":
        scale, currency = "", False
    return TableFigure(label=label, printed=_printed(lines[row], cell), year=column_year, scale=scale,
                       currency=currency, line=lines[row])
