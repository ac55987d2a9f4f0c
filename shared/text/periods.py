"""Dates and reporting periods in text: one set of rules for a document's cover and for a
question, so "FY2018" in a question and "For the fiscal year ended ... 2018" on a cover meet.

Fiscal year convention (see shared/model/card.py, DocumentPeriod): the year a fiscal year ends
in, unless the text names the fiscal year itself ("fiscal 2023", "FY23").

A document's period comes only from phrases that say they are a period ("year ended",
"quarterly period ended", "first quarter of fiscal 2023"): a bare year on a cover is as often
an address, a note's maturity or a copyright. A question is short and about one thing, so
there a bare year counts too ("revenue in 2019").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from shared.model.card import DocumentPeriod

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR = r"(?:19|20)\d\d"
_DATE = re.compile(
    rf"\b(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>{_YEAR})\b"
    rf"|\b(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m2>{_MONTH}),?\s+(?P<y2>{_YEAR})\b"
    rf"|\b(?P<y3>{_YEAR})-(?P<m3>\d\d)-(?P<d3>\d\d)\b"
    rf"|\b(?P<m4>\d{{1,2}})/(?P<d4>\d{{1,2}})/(?P<y4>{_YEAR})\b",
    re.IGNORECASE,
)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_ORDINAL = r"(?P<ordinal>first|second|third|fourth|1st|2nd|3rd|4th)"

# "fiscal 2023", "fiscal year 2023", "FY2023", "FY 23", "FY'23", "2023 fiscal year", "full year 2022".
_FISCAL_YEAR = re.compile(
    rf"\bfiscal(?:\s+year)?\s+(?P<y1>{_YEAR})\b"
    rf"|\bFY\s?'?(?P<y2>{_YEAR}|\d\d)\b"
    rf"|\b(?P<y3>{_YEAR})\s+fiscal\s+year\b"
    rf"|\bfull[\s-]year\s+(?:of\s+)?(?:fiscal\s+)?(?P<y4>{_YEAR})\b",
    re.IGNORECASE,
)
# "Q2 2023", "Q2 FY23", "Q2'23", "2023 Q2", "2023Q2", "FY2023Q2", "second quarter of fiscal 2019",
# "first-quarter 2023", "3rd quarter 2021", and "the second quarter" with no year.
_QUARTER = re.compile(
    rf"\bQ(?P<q1>[1-4])\s?(?:FY\s?|fiscal\s+)?'?(?P<y1>{_YEAR}|\d\d)?\b"
    rf"|\b(?:FY\s?)?(?P<y2>{_YEAR})\s?Q(?P<q2>[1-4])\b"
    rf"|\b{_ORDINAL}[\s-]quarter\b(?:\s*\([^()]{{0,30}}\))?(?:[\s,]+(?:of\s+)?(?:the\s+)?(?:fiscal\s+)?(?:year\s+)?(?P<y3>{_YEAR})\b"
    rf"|\s+(?:of\s+)?(?:fiscal\s+)?FY\s?'?(?P<y4>{_YEAR}|\d\d)\b)?",
    re.IGNORECASE,
)
# "H1 FY2023", "1H23", "first half of 2023", "second-half 2022": a half year is reported by the
# interim report whose year-to-date column closes it (the second quarter's), or by the year's.
_HALF = re.compile(r"\bH(?P<h1>[12])\b|\b(?P<h2>[12])H(?=\d\d\b|\s)|\b(?P<h3>first|second)[\s-]half\b", re.IGNORECASE)
_HALF_CLOSING_QUARTER = {"1": 2, "2": 4, "first": 2, "second": 4}
# The columns of an interim report's statements: "Three Months Ended ... Six Months Ended" (or
# "three and six months ended") is a second quarter; 12-, 13- and 16-week quarters and their
# 24-, 26-, 28-, 36-, 39-, 40-week years-to-date are the retail calendars' equivalents.
_SPAN_NUMBER = (
    r"three|six|nine|twelve|thirteen|sixteen|twenty[\s-](?:four|six|eight)|thirty[\s-](?:six|nine)|forty"
    r"|fifty[\s-]t(?:wo|hree)|\d{1,2}"
)
_SPAN_ENDED = re.compile(
    rf"\b(?P<first>{_SPAN_NUMBER})(?:\s+and\s+(?P<second>{_SPAN_NUMBER}))?\s+(?P<unit>months|weeks)\s+ended\b",
    re.IGNORECASE,
)
_SPAN_WORDS = {
    "three": 3, "six": 6, "nine": 9, "twelve": 12, "thirteen": 13, "sixteen": 16, "twentyfour": 24,
    "twentysix": 26, "twentyeight": 28, "thirtysix": 36, "thirtynine": 39, "forty": 40, "fiftytwo": 52,
    "fiftythree": 53,
}
# Weeks of a span -> the months it stands for (a 12-, 13- or 16-week quarter is a quarter).
_WEEKS_AS_MONTHS = {12: 3, 13: 3, 16: 3, 24: 6, 26: 6, 28: 6, 36: 9, 39: 9, 40: 9, 52: 12, 53: 12}


# "For the fiscal year ended June 30, 2021", "quarterly period ended", "three months ended",
# "52 weeks ended", "period ended", "as of December 31, 2020"; a following ", 2014 and 2013"
# lists the further years a statement covers.
_ENDED = re.compile(
    r"\b(?:(?P<closing>(?:fourth\s+)?quarter\s+and\s+(?:the\s+)?(?:full\s+|fiscal\s+)?years?)"
    r"|(?P<annual>(?:fiscal\s+)?years?|twelve\s+months|12\s+months|fifty[\s-]t(?:wo|hree)\s+weeks|5[23]\s+weeks)"
    r"|(?P<quarterly>(?:fiscal\s+)?quarter(?:ly\s+period)?|three\s+months|3\s+months|thirteen\s+weeks|13\s+weeks|twelve\s+weeks|12\s+weeks)"
    r"|(?P<period>period|months|weeks|\)|,))"
    r"\s*ended\s*:?\s*",
    re.IGNORECASE,
)
_AS_OF = re.compile(r"\bas\s+(?:of|at)\s+", re.IGNORECASE)
_MORE_YEARS = re.compile(rf"(?:\s*,\s*(?:and\s+)?{_YEAR}|\s+and\s+{_YEAR})+")
_BARE_YEAR = re.compile(rf"(?<![\w$.,/-])(?P<year>{_YEAR})(?![\w%]|[.,]\d)")


def _month(name: str) -> int:
    return _MONTHS[name.lower().rstrip(".")[:3]]


def _date_of(match: re.Match[str]) -> date | None:
    g = match.groupdict()
    try:
        if g["y1"]:
            return date(int(g["y1"]), _month(g["m1"]), int(g["d1"]))
        if g["y2"]:
            return date(int(g["y2"]), _month(g["m2"]), int(g["d2"]))
        if g["y3"]:
            return date(int(g["y3"]), int(g["m3"]), int(g["d3"]))
        return date(int(g["y4"]), int(g["m4"]), int(g["d4"]))
    except ValueError:  # "February 30": not a date
        return None


def find_dates(text: str) -> list[date]:
    """Every calendar date written out in `text` ("November 25, 2029", "25 Nov 2029",
    "2015-11-27", "11/27/2015" read month first), in order of first mention."""
    seen: list[date] = []
    for match in _DATE.finditer(text):
        found = _date_of(match)
        if found is not None and found not in seen:
            seen.append(found)
    return seen


def _full_year(digits: str) -> int:
    year = int(digits)
    if len(digits) == 2:
        # Two-digit fiscal years ("FY23") are of this century unless they cannot be.
        year += 2000 if year < 70 else 1900
    return year


# closing: "the quarter and year ended" (a fourth quarter and its year); point: "as of".
EndKind = Literal["annual", "closing", "quarterly", "period", "point"]


@dataclass(frozen=True, slots=True)
class PeriodEnd:
    kind: EndKind
    end: date
    start: int  # offset of the phrase in the text
    more_years: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class QuarterMention:
    quarter: int
    year: int | None
    start: int


@dataclass(frozen=True, slots=True)
class YearMention:
    year: int
    start: int


def period_ends(text: str, with_points: bool = False) -> list[PeriodEnd]:
    """Each "... ended DATE" (and, with `with_points`, "as of DATE") in order."""
    found: list[PeriodEnd] = []
    phrases: list[tuple[re.Match[str], EndKind]] = []
    for match in _ENDED.finditer(text):
        kind: EndKind = (
            "closing" if match["closing"] else "annual" if match["annual"]
            else "quarterly" if match["quarterly"] else "period"
        )
        phrases.append((match, kind))
    if with_points:
        phrases.extend((match, "point") for match in _AS_OF.finditer(text))
    for match, kind in sorted(phrases, key=lambda p: p[0].start()):
        dated = _DATE.match(text, match.end())
        if dated is None:
            continue
        end = _date_of(dated)
        if end is None:
            continue
        more = tuple(int(y) for y in re.findall(_YEAR, m.group(0))) if (m := _MORE_YEARS.match(text, dated.end())) else ()
        found.append(PeriodEnd(kind=kind, end=end, start=match.start(), more_years=more))
    return found


def fiscal_year_mentions(text: str) -> list[YearMention]:
    found = []
    for match in _FISCAL_YEAR.finditer(text):
        digits = match["y1"] or match["y2"] or match["y3"] or match["y4"]
        found.append(YearMention(year=_full_year(digits), start=match.start()))
    return found


def quarter_mentions(text: str) -> list[QuarterMention]:
    found = []
    for match in _QUARTER.finditer(text):
        quarter = int(match["q1"] or match["q2"] or 0) or _ORDINALS[match["ordinal"].lower()]
        digits = match["y1"] or match["y2"] or match["y3"] or match["y4"]
        found.append(QuarterMention(quarter=quarter, year=_full_year(digits) if digits else None, start=match.start()))
    return found


def _span_months(word: str, unit: str) -> int | None:
    key = re.sub(r"[\s-]", "", word.lower())
    count = int(key) if key.isdigit() else _SPAN_WORDS.get(key)
    if count is None:
        return None
    if unit.lower() == "weeks":
        return _WEEKS_AS_MONTHS.get(count)
    return count if count in (3, 6, 9, 12) else None


def year_to_date_quarter(text: str) -> int | None:
    """The quarter an interim report's columns tell: a quarter's column ("three months ended")
    beside a longest year-to-date column of six, nine or twelve months makes it the second,
    third or fourth quarter; a quarter's column alone, the first. None without a quarter's column."""
    spans: set[int] = set()
    for match in _SPAN_ENDED.finditer(text):
        for word in (match["first"], match["second"]):
            if word:
                months = _span_months(word, match["unit"])
                if months is not None:
                    spans.add(months)
    if 3 not in spans:
        return None
    return max(spans) // 3


# A fiscal year that ends this early in January is named after the year before.
_EARLY_JANUARY_DAYS = 7
# How far (characters) a fiscal-year label may stand from a period-end phrase and still name
# its fiscal year: the same sentence or headline, not another paragraph.
_NEAR = 200


def _near(mentions: list[YearMention], offset: int) -> YearMention | None:
    close = [m for m in mentions if abs(m.start - offset) <= _NEAR]
    return min(close, key=lambda m: abs(m.start - offset)) if close else None


def _years(*groups: object) -> list[int]:
    years: set[int] = set()
    for group in groups:
        if isinstance(group, int):
            years.add(group)
        elif isinstance(group, (list, tuple)):
            years.update(y for y in group if isinstance(y, int))
    return sorted(years)


def fiscal_year_ending(end: date) -> int:
    """The fiscal year a period ending on `end` belongs to: its calendar year, except that a
    year ending in the first week of January is the previous one (52/53-week years end on the
    weekday nearest December 31, so "January 3, 2016" closes fiscal 2015)."""
    return end.year - 1 if end.month == 1 and end.day <= _EARLY_JANUARY_DAYS else end.year


def document_period(text: str) -> DocumentPeriod:
    """The period a document reports on, from the text of its first pages: the first of a
    "year ended" or "quarterly period ended" phrase (a fiscal-year label beside it names the
    year) and a quarter named with its year ("Second Quarter 2023 Results"); else the first
    fiscal-year label. A headline comes before the footnotes that name other periods, so the
    earliest wins. Empty when the text names none."""
    labels = fiscal_year_mentions(text)
    quarters = quarter_mentions(text)
    ends = [e for e in (_named_kind(e, labels, quarters) for e in period_ends(text)) if e is not None]
    dated = [q for q in quarters if q.year is not None]
    if ends and not (dated and dated[0].start < ends[0].start):
        first = ends[0]
        label = _near(labels, first.start)
        fiscal_year = label.year if label else fiscal_year_ending(first.end)
        quarter: int | None = 4 if first.kind == "closing" else None
        if first.kind == "quarterly":
            named = [q for q in quarters if abs(q.start - first.start) <= _NEAR]
            quarter = named[0].quarter if named else year_to_date_quarter(text)
        more = first.more_years if first.kind in ("annual", "closing") else ()
        return DocumentPeriod(
            fiscal_year=fiscal_year, fiscal_quarter=quarter, period_end=first.end,
            years=_years(fiscal_year, first.end.year, more),
        )
    if dated:
        first_quarter = dated[0]
        ending = [e for e in ends if e.kind in ("quarterly", "closing") and abs(e.start - first_quarter.start) <= 2 * _NEAR]
        period_end = ending[0].end if ending else None
        return DocumentPeriod(
            fiscal_year=first_quarter.year, fiscal_quarter=first_quarter.quarter, period_end=period_end,
            years=_years(first_quarter.year, period_end.year if period_end else None),
        )
    if labels:
        # "Fourth Quarter and Full Year 2022": the quarter shares the label's year.
        label = labels[0]
        beside = [q for q in quarters if 0 <= label.start - q.start <= _NEAR // 4]
        return DocumentPeriod(
            fiscal_year=label.year, fiscal_quarter=beside[0].quarter if beside else None, years=[label.year]
        )
    return DocumentPeriod()


def _named_kind(end: PeriodEnd, labels: list[YearMention], quarters: list[QuarterMention]) -> PeriodEnd | None:
    """A bare "period ended" or ", ended" is a quarter's end when a quarter is named just
    before it, a fiscal year's when a fiscal-year label is; else it is not a reporting period."""
    if end.kind in ("annual", "closing", "quarterly"):
        return end
    before = range(end.start - _NEAR // 2, end.start + 1)
    if any(q.start in before for q in quarters):
        return PeriodEnd(kind="quarterly", end=end.end, start=end.start, more_years=end.more_years)
    if any(m.start in before for m in labels):
        return PeriodEnd(kind="annual", end=end.end, start=end.start, more_years=end.more_years)
    return None


def question_period(question: str) -> DocumentPeriod:
    """The period a question asks about: "FY2018", "fiscal 2022", "Q2 2023", "second quarter
    of 2019", "H1 FY2023" (the second quarter's year to date), "year ended June 30, 2021" (fiscal 2021), "as of December 31, 2020" (a period end
    and its year), "in 2019" (a year only: whether calendar or fiscal is not said). Naming
    several fiscal years, the latest is the fiscal year (its report holds the earlier ones
    too) and `years` lists them all."""
    ends = period_ends(question, with_points=True)
    labels = fiscal_year_mentions(question)
    quarters = quarter_mentions(question)
    fiscal_years = [m.year for m in labels]
    fiscal_years += [fiscal_year_ending(e.end) for e in ends if e.kind in ("annual", "closing", "quarterly")]
    fiscal_years += [q.year for q in quarters if q.year is not None]
    fiscal_year = max(fiscal_years) if fiscal_years else None
    quarter = quarters[0].quarter if quarters else None
    if quarter is None and (ytd := year_to_date_quarter(question)) not in (None, 1):
        # "three and nine months ended" asks for a third quarter; "three months ended" alone
        # could be any quarter.
        quarter = ytd
    if quarter is None and (half := _HALF.search(question)) is not None:
        quarter = _HALF_CLOSING_QUARTER[(half["h1"] or half["h2"] or half["h3"]).lower()]
    period_end = ends[0].end if ends else None
    bare = bare_years(question)
    return DocumentPeriod(
        fiscal_year=fiscal_year,
        fiscal_quarter=quarter,
        period_end=period_end,
        years=_years(fiscal_years, [e.end.year for e in ends], [y for e in ends for y in e.more_years], bare),
    )


def bare_years(text: str) -> list[int]:
    """The years `text` writes as bare four-digit numbers, in order (not amounts: "$2019",
    "2,019", "2019.5", "2019%")."""
    return [int(m["year"]) for m in _BARE_YEAR.finditer(text)]


def period_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` names a period ("FY2018", "Q2 2023", "fiscal 2022", "March 31, 2021", a bare
    year): (start, end) offsets, in order, overlaps merged. A follow-up question that names a
    period replaces the previous question's at these offsets."""
    spans = sorted((m.start(), m.end()) for pattern in (_QUARTER, _FISCAL_YEAR, _DATE, _BARE_YEAR)
                   for m in pattern.finditer(text) if m.group(0).strip())
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
