"""Numbers as quantities: "1,577", "$1.6 billion", "12.5 %", "-3", "March 3, 2021".

A sentence and the page it cites may write the same quantity differently ("$1.6 billion" and
"1,600 million"; a table headed "in millions" prints "1,577"). Each mention is read into a value
with its kind (plain, percent, currency) and precision, and two mentions agree when the values
are equal at the precision the sentence states. Dates become one mention each (year, month,
day), so "3 March 2021" and "March 3, 2021" agree and their day is not read as a count.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from shared.text.normalize import fold

_SCALES = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "millions": 1e6, "mn": 1e6, "m": 1e6, "mm": 1e6,
    "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12,
    "thousands": 1e3, "trillions": 1e12,
}
# Scale words a table's header leaves out ("in millions"): an unscaled page number may stand
# for the sentence's value at any of these scales.
_IMPLIED_SCALES = (1e3, 1e6, 1e9)
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        ["january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
         "august aug", "september sep sept", "october oct", "november nov", "december dec"]
    )
    for name in names.split()
}
# Each pattern below opens with a look-ahead at the characters a match can start with: the
# same matches, found without trying the whole pattern at every other character of a text.
_MONTH_INITIAL = "(?=[" + "".join(sorted({name[0] for name in _MONTHS})) + "])"
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>3[01]|[12]\d|0?[1-9])"
_DATE_MDY = re.compile(rf"{_MONTH_INITIAL}\b{_MONTH}\s+{_DAY}(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})\b", re.I)
_DATE_DMY = re.compile(rf"(?=\d)\b{_DAY}(?:st|nd|rd|th)?\s+{_MONTH}\s*,?\s+(?P<year>\d{{4}})\b", re.I)
_DATE_MY = re.compile(rf"{_MONTH_INITIAL}\b{_MONTH}\s*,?\s+(?P<year>\d{{4}})\b", re.I)
_DATE_MD = re.compile(rf"{_MONTH_INITIAL}\b{_MONTH}\s+{_DAY}(?:st|nd|rd|th)?\b(?!,?\s*\d)", re.I)
_DATE_ISO = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b")
_CURRENCY = "$€£¥"
_NUMBER = re.compile(
    rf"(?=[-+{_CURRENCY}\s\d.])"  # a sign, a currency, a space, then the digits or their point
    rf"(?P<sign>[-+])?(?P<currency>[{_CURRENCY}])?\s?(?P<sign2>[-+])?"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?P<percent>%|percent\b|per\s?cent\b|pct\b))?"
    r"(?:\s?(?P<scale>thousands?|millions?|billions?|trillions?|mn|bn|tn|mm|[kmb])\b)?",
    re.I,
)
# Section and version numbers ("1.2.3") are identifiers, checked as names.
_DOTTED = re.compile(r"\d+(?:\.\d+){2,}")
# Digits glued to letters ("R_CHECK_5", "x86", "v2") belong to a name, not a quantity.
_GLUED = re.compile(r"[A-Za-z_]")
# Every pattern above needs a digit: a text without one states no quantity.
_DIGIT = re.compile(r"\d")
# Every month name starts a word with one of these: a text without one names no month (most of
# them, and this is found several times faster than the date patterns fail).
_MONTH_START = re.compile(
    _MONTH_INITIAL + r"\b(?:" + "|".join(sorted({name[:3] for name in _MONTHS})) + ")", re.I
)


@dataclass(frozen=True)
class NumberMention:
    """One quantity as written: `value` already scaled, `places` the decimals written (the
    precision the writer vouches for), `kind` plain|percent|currency|date."""

    text: str
    value: float
    places: int
    kind: str
    scale: float
    start: int
    end: int

    def agrees_with(self, other: NumberMention) -> bool:
        """Whether `other` (on the page) states this quantity, at this mention's precision."""
        if self.kind == "date" or other.kind == "date":
            return self.kind == other.kind and _same_date(self.value, other.value)
        if (self.kind == "percent") != (other.kind == "percent"):
            return False
        # A positive figure may restate a page's negative one in words ("fell 5 %" for "-5 %");
        # a negative figure needs a negative on the page (a minus or accounting parentheses).
        value = abs(other.value) if self.value >= 0 else other.value
        candidates = [value]
        if other.scale == 1.0:
            candidates += [value * s for s in _IMPLIED_SCALES]
        if self.scale == 1.0:  # the sentence may drop the scale the page states
            candidates += [value / s for s in _IMPLIED_SCALES if s <= other.scale]
        return any(_same_at_precision(self, c) for c in candidates)


def _same_at_precision(mention: NumberMention, value: float) -> bool:
    if abs(mention.value - value) <= 1e-9 * max(abs(value), 1.0):
        return True
    # A rounded figure ("$1.6 billion" for 1,577 million) agrees when it keeps at least two
    # significant digits: a one-digit figure would agree with almost anything.
    unit = 10.0 ** (-mention.places) * mention.scale
    return abs(mention.value) / unit >= 10 and abs(mention.value - value) <= unit / 2 + 1e-9 * abs(value)


def _same_date(said: float, stated: float) -> bool:
    """Year, month and day agree wherever both name them ("June 30" and "June 30, 2023")."""
    a, b = int(said), int(stated)
    parts = ((a // 10000, b // 10000), (a // 100 % 100, b // 100 % 100), (a % 100, b % 100))
    return all(x == y or not x or not y for x, y in parts) and a // 100 % 100 == b // 100 % 100


def _date_value(year: str, month: str, day: str | None) -> float:
    m = _MONTHS.get(month.lower().rstrip(".")) if not month.isdigit() else int(month)
    return float(int(year) * 10000 + (m or 0) * 100 + (int(day) if day else 0))


@lru_cache(maxsize=16384)
def number_mentions(text: str) -> tuple[NumberMention, ...]:
    """Every quantity and date in `text`, in order."""
    text = fold(text)
    if not _DIGIT.search(text):
        return ()
    taken: list[tuple[int, int]] = [m.span() for m in _DOTTED.finditer(text)]
    found: list[NumberMention] = []
    dates = (_DATE_ISO, _DATE_MDY, _DATE_DMY, _DATE_MY, _DATE_MD) if _MONTH_START.search(text) else (_DATE_ISO,)
    for pattern in dates:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            day = m.groupdict().get("day")
            year = m.groupdict().get("year") or "0"
            found.append(NumberMention(m.group(0), _date_value(year, m.group("month"), day), 0,
                                       "date", 1.0, m.start(), m.end()))
            taken.append((m.start(), m.end()))
    for m in _NUMBER.finditer(text):
        start, end = m.start("digits"), m.end()
        if any(start < e and s < end for s, e in taken):
            continue
        before = text[start - 1] if start else " "
        after = text[m.end("digits")] if m.end("digits") < len(text) else " "
        if _GLUED.match(before) or _GLUED.match(after) or (before == "." and start > 1 and text[start - 2].isdigit()):
            continue  # part of an identifier, or a section/version number's tail
        digits = m.group("digits").replace(",", "")
        value = float(digits)
        places = len(digits.split(".")[1]) if "." in digits else 0
        scale_word = (m.group("scale") or "").lower()
        # A lone capital M/B/K after a number is a scale only next to a currency sign.
        if len(scale_word) == 1 and not m.group("currency"):
            scale_word = ""
        scale = _SCALES.get(scale_word, 1.0)
        negative = "-" in ((m.group("sign") or "") + (m.group("sign2") or ""))
        # A minus right after a letter or digit is a hyphen ("pages 3-5"), not a sign.
        if negative and m.start() > 0 and text[m.start() - 1].isalnum():
            negative = False
        negative = negative or (before == "(" and text[m.end("digits"):m.end("digits") + 1] == ")")
        kind = "percent" if m.group("percent") else "currency" if m.group("currency") else "plain"
        shown = m.group(0).strip()
        if not scale_word and m.group("scale"):
            shown = shown[: -len(m.group("scale"))].strip()
        found.append(NumberMention(shown, (-value if negative else value) * scale, places, kind, scale, start, end))
    return tuple(sorted(found, key=lambda n: n.start))


def unstated(said: tuple[NumberMention, ...], stated: tuple[NumberMention, ...],
             agree: Callable[[NumberMention, NumberMention], bool] | None = None) -> list[NumberMention]:
    """The quantities of `said` that `stated` does not state; a quantity said twice must be
    stated twice ("Note 4 and Note 4" is not "Note 3 and Note 4"). `agree(said, stated)`
    replaces `NumberMention.agrees_with` (e.g. memoised)."""
    agrees = agree or NumberMention.agrees_with
    free = list(stated)
    missing = []
    for mention in said:
        match = next((i for i, other in enumerate(free) if agrees(mention, other)), None)
        if match is None:
            missing.append(mention)
        else:
            free.pop(match)
    return missing


def unmatched_numbers(sentence: str, evidence: str) -> list[NumberMention]:
    """The sentence's quantities that `evidence` does not state."""
    return unstated(number_mentions(sentence), number_mentions(evidence))
