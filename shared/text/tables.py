"""Figures read off a page's table rows: the row a question names, the column of the period it
asks about, and the scale the table's heading states.

A statement page keeps one printed line per row ("Total current assets 16,525 15,134") under a
line of column years ("(Dollars in millions) 2019 2018"), or under a heading whose years stand
on lines of their own ("August 29," / "2021" / "August 30," / "2020"). A row's label is its text
before the first figure. Its cells are its figures, laid against the nearest line above that
prints as many years, else the years of the heading lines above the table, read in order: the
years are the columns. A row has a neighbour row with as many cells: a table. The statement a
row belongs to is the nearest title above it ("CONSOLIDATED BALANCE SHEETS").

A question names its row by some of the label's words and many words of its own ("how much
total assets did Costco have at the end of FY2021?"): `label_figure` picks the row most of
whose label the question holds, and, among those, the one holding most of the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from shared.text.lexical import terms
from shared.text.numbers import NumberMention, number_mentions
from shared.text.periods import bare_years

# "(Dollars in millions)", "(in thousands, except per share data)", "amounts in millions".
_SCALE = re.compile(r"\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)
_SCALE_WORD = {"thousands": "thousand", "millions": "million", "billions": "billion"}
_CURRENCY = re.compile(r"\$|\bdollars\b|\bUSD\b", re.IGNORECASE)
_SCALE_VALUE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_VALUE_SCALE = {v: k for k, v in _SCALE_VALUE.items()}
# A financial statement's title: "Consolidated Statements of Cash Flows", "Balance Sheets".
_TITLE = re.compile(
    r"\b(?:condensed\s+)?(?:consolidated\s+)?(?:balance\s+sheets?|statements?\s+of\s+[A-Za-z’' ,]+?)\s*$",
    re.IGNORECASE,
)
_TITLE_LINES = 4  # a title set one word a line ("CONSOLIDATED" / "BALANCE" / "SHEETS")
# A heading line holds few letters ("August 29,", "As of December 31, 2017 2016"); prose more.
_HEADING_LETTERS = 40
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
    title: str = ""  # the statement the row belongs to, as titled on the page
    columns: tuple[int, ...] = ()  # the years of the table's columns, in order, when its heading prints them

    def described(self) -> str:
        """The row as a reader of the table sees it: the statement, the scale, the columns and
        the row as printed ("Consolidated Statement of Cash Flows (in millions); columns 2018 |
        2017 | 2016; row: Purchases of property, plant and equipment (1,577) (1,373) (1,420)")."""
        heading = self.title or "table"
        if self.scale:
            heading += f" (in {self.scale}s)"
        columns = f"; columns {' | '.join(map(str, self.columns))}" if self.columns else ""
        return f"{heading}{columns}; row: {' '.join(self.line.split())}"

    def statement(self, asked_scale: float | None = None) -> str:
        """The cell as an answer leads with it: "$16,525 million for 2019 — Total current
        assets"; at `asked_scale` (1e6: the question asks in millions) when the table prints
        another: "$5,466 million for 2017" for a cell printing 5,466,312 in thousands. One
        quantity only: the verifier finds each quantity a sentence states on the page once."""
        value = self.printed.replace("$", "").replace(" ", "")
        negative = value.startswith("(") and value.endswith(")")
        value = value.strip("()")
        sign = ("-" if negative else "") + ("$" if self.currency else "")
        amount = _converted(value, self.scale, asked_scale) or (f"{value} {self.scale}" if self.scale else value)
        # "for 2019", not "(2019)": a figure in parentheses reads as a negative one, and
        # "FY2019" as a name the page must print.
        when = f" for {self.year}" if self.year is not None else ""
        where = f", {self.title}" if self.title else ""
        return f"{sign}{amount}{when}{FIGURE_SEPARATOR}{self.label}{where}"


# Between a figure answer's value (a reading of the cell: scaled, rounded, signed) and the row's
# label and statement, which are the page's words.
FIGURE_SEPARATOR = " — "


def _converted(value: str, scale: str, asked: float | None) -> str:
    """`value` (as printed, at `scale`) at the asked scale, rounded to a whole unit from 100
    units up and to three significant digits below; "" when no conversion is asked or needed."""
    table = _SCALE_VALUE.get(scale)
    if asked is None or table is None or asked == table or "%" in value:
        return ""
    try:
        amount = Decimal(value.replace(",", "")) * Decimal(table) / Decimal(asked)
    except InvalidOperation:
        return ""
    places = 0 if amount >= 100 else 1 if amount >= 10 else 2
    rounded = amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{rounded:,.{places}f} {_VALUE_SCALE[asked]}"


# What may stand between and after a row's cells: currency signs, parentheses, dashes, percent
# signs and note marks; a word there ("12 bar.") makes the line prose, not a row.
_AFTER_CELLS = " \t$€£()%—–-*,."
_BETWEEN_CELLS = re.compile(f"[{re.escape(_AFTER_CELLS)}\\s]*")
# A figure's digits stand within this many characters of its end ("12.5 percent", "3 billion").
_FIGURE_TAIL = 12
_ENDS_IN_A_FIGURE = re.compile(r"\d")


def _cells(line: str) -> tuple[str, list[NumberMention]]:
    """The row's label and its figures; no figures when the line is not a row (prose, or a line
    whose figures are not all at its end)."""
    if not _ENDS_IN_A_FIGURE.search(line.rstrip(_AFTER_CELLS)[-_FIGURE_TAIL:]):
        return line, []  # a row ends in its last figure: no need to read a paragraph's numbers
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


def _letters(line: str) -> int:
    return sum(c.isascii() and c.isalpha() for c in line)


def _prose(line: str) -> bool:
    """More letters than a heading line holds (a short line is none: no need to count)."""
    return len(line) > _HEADING_LETTERS and _letters(line) > _HEADING_LETTERS


def _column_years(lines: list[str], row: int, columns: int) -> list[int] | None:
    for k in range(row - 1, max(-1, row - 1 - _HEADER_LINES), -1):
        # A line of column years holds little else: months, days, the words of a heading.
        years = bare_years(lines[k])
        if len(years) == columns and not _prose(lines[k]):
            return years
    return _stacked_years(lines, row, columns)


def _stacked_years(lines: list[str], row: int, columns: int) -> list[int] | None:
    """The years of the heading lines above the table's first row, in reading order, when they
    are as many as the row's cells: a heading whose dates stand one to a line."""
    years: list[int] = []
    k = row - 1
    while k >= 0 and _cells(lines[k])[1] and _cells(lines[k])[0]:
        k -= 1  # the rows above: the same table
    for j in range(k, max(-1, k - _HEADER_LINES), -1):
        if _prose(lines[j]):
            break  # prose: the heading ended
        years = bare_years(lines[j]) + years
    return years if len(years) == columns else None


def _title(lines: list[str], row: int) -> str:
    """The nearest statement title above the row, as the page prints it (title-cased when the
    page prints it in capitals); "" when none stands within the heading's reach."""
    for k in range(row - 1, max(-1, row - 1 - _HEADER_LINES), -1):
        if len(lines[k]) > 2 * _HEADING_LETTERS:
            continue  # prose, not a title
        for width in range(_TITLE_LINES, 0, -1):  # the whole title, not its last words
            block = " ".join(line.strip() for line in lines[max(0, k - width + 1) : k + 1])
            if _letters(block) > 2 * _HEADING_LETTERS:
                continue  # prose mentioning a statement, not its title
            found = _TITLE.search(block)
            if found:
                title = " ".join(found.group(0).split()).strip(" ,")
                return title.title().replace(" Of ", " of ") if title.isupper() else title
    return ""


def _scale(lines: list[str], row: int) -> tuple[str, bool]:
    """The scale the nearest heading above the row states, and whether the table is in a
    currency: the heading says so, or a row between it and this one prints the sign (a
    statement prints "$" on its first and total rows only)."""
    for k in range(row - 1, max(-1, row - 1 - _HEADER_LINES), -1):
        found = _SCALE.search(lines[k])
        if found:
            currency = bool(_CURRENCY.search(lines[k])) or any("$" in line for line in lines[k + 1 : row + 1])
            return _SCALE_WORD[found.group(1).lower()], currency
    return "", "$" in lines[row]


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
    return _figure_at(lines, row, label, cells, year)


@dataclass(frozen=True)
class LabelMatch:
    """How well a row's label matches a question: the share of the label's terms the question
    holds, and how many it holds."""

    label_share: float
    matched: int


def label_figure(page: str, wanted: set[str], year: int | None, min_label_share: float,
                 ) -> tuple[TableFigure, LabelMatch] | None:
    """The cell, in the column of `year`, of the row most of whose label's terms are among
    `wanted` (the question's index terms; at least `min_label_share` of the label, and at
    least two terms unless the label has one), the row holding more of `wanted` first; None
    when no such row has a cell of that year."""
    lines = page.split("\n")
    found: list[tuple[LabelMatch, int, str, list[NumberMention]]] = []
    for k, line in enumerate(lines):
        label, cells = _cells(line)
        if not cells or not label:
            continue
        own = set(terms(label))
        matched = len(own & wanted)
        if own and matched >= min(2, len(own)) and matched / len(own) >= min_label_share:
            found.append((LabelMatch(round(matched / len(own), 4), matched), k, label, cells))
    for match, row, label, cells in sorted(found, key=lambda f: (-f[0].matched, -f[0].label_share, f[1])):
        figure = _figure_at(lines, row, label, cells, year)
        if figure is not None:
            return figure, match
    return None


def _figure_at(lines: list[str], row: int, label: str, cells: list[NumberMention],
               year: int | None) -> TableFigure | None:
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
    if cell.kind == "percent":
        scale, currency = "", False
    return TableFigure(label=label, printed=_printed(lines[row], cell), year=column_year, scale=scale,
                       currency=currency, line=lines[row], title=_title(lines, row), columns=tuple(years or ()))
