"""Pages a question names, in digits, in words or by position, and the pages a question about
the document itself (its date, title, author, cover) looks at first.

Three kinds of mention:

- *printed*: "page 14", "page fourteen", "p. 3", "pp. 5-7", "pages 5 and 6", "slide 4",
  "page iv", 14페이지, 第14页 — the number a reader sees printed on the page (its label);
- *position*: "the first page", "the 14th page", "the second slide", "the front page", "the
  cover" — counted from the first physical page, whatever is printed on it;
- *from the end*: "the last page", "the final page", "the next-to-last page", "the back
  cover" — counted back from the last physical page.

`resolve_pages` turns mentions into physical (1-based) page numbers of one document from its
page count and, when known, its printed page labels. Pure text work: no index, no store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from shared.text.normalize import fold

# A range wider than this ("pages 1-200") is a scope, not a page to look at: it names no page.
MAX_RANGE_PAGES = 10
# "The cover pages": a document's date, title, author and issuer sit on its first pages.
COVER_PAGES = 2

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ORDINAL_UNITS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
}
_ORDINAL_TENS = {
    "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70,
    "eightieth": 80, "ninetieth": 90,
}


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_UNIT = _alternatives(_UNITS)
_TEN = _alternatives(_TENS)
# A cardinal in words up to 999: "fourteen", "twenty-one", "one hundred and five".
_CARDINAL_WORDS = (
    rf"(?:(?:{_UNIT})\s+hundred(?:\s+(?:and\s+)?(?:(?:{_TEN})(?:[\s-](?:{_UNIT}))?|{_UNIT}))?"
    rf"|(?:{_TEN})(?:[\s-](?:{_UNIT}))?|{_UNIT})"
)
_ORDINAL_WORDS = (
    rf"(?:(?:{_TEN})[\s-](?:{_alternatives(_ORDINAL_UNITS)})|{_alternatives(_ORDINAL_TENS)}"
    rf"|{_alternatives(_ORDINAL_UNITS)}|(?:{_UNIT}\s+)?hundredth)"
)
_ROMAN = r"(?=[ivxlc])(?:c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
_NUMBER = rf"(?:\d{{1,4}}|{_CARDINAL_WORDS}|{_ROMAN})"
_ORDINAL = rf"(?:\d{{1,4}}(?:st|nd|rd|th)|{_ORDINAL_WORDS})"
_RANGE_JOIN = r"\s*(?:-|to|through|thru|and|or|&|,)\s*"
# A number ends where no letter or digit follows, nor a hyphenated word ("page 3-D").
_NUMBER_END = r"(?!\w)(?!-[a-z])"
_PAGE_WORD = r"(?:pages?|pgs?\.?|pp?\.|slides?)"
_SHEET = r"(?:page|slide|sheet)s?"

_PAGE_NUMBER_WORD = r"(?:(?:no\.|number|#)\s*)?"
# "page 14", "pages 5-7", "pp. 5, 6 and 9", "slide four", "page no. 3", "page #3", "page 3 to page 10".
_PRINTED = re.compile(
    rf"(?<![\w.])(?P<word>{_PAGE_WORD})\s*{_PAGE_NUMBER_WORD}"
    rf"(?P<list>{_NUMBER}(?:{_RANGE_JOIN}(?:{_PAGE_WORD}\s*{_PAGE_NUMBER_WORD})?{_NUMBER})*){_NUMBER_END}"
)
_LIST_ITEM = re.compile(
    rf"(?P<join>{_RANGE_JOIN})?(?:{_PAGE_WORD}\s*{_PAGE_NUMBER_WORD})?(?P<number>{_NUMBER}){_NUMBER_END}"
)
# Quoted text ("formatted as ['Page 2', 'Page 4']", a title in quotes) quotes a page; it does
# not say where to look.
_QUOTED = re.compile(r"(?<!\w)'[^'\n]{1,80}'(?!\w)|\"[^\"\n]{1,80}\"")
# 14페이지, 14쪽 (Korean), 第14页 / 第14頁 (Chinese), 14ページ (Japanese).
_PRINTED_CJK = re.compile(r"(?:第\s*)?(\d{1,4})\s*(?:페이지|쪽|页|頁|ページ)")
# "the 14th page", "the second slide", "the third page from the end", "the last page".
_POSITION = re.compile(
    rf"\b(?P<ordinal>{_ORDINAL}|last|final|closing|opening|penultimate|antepenultimate"
    rf"|(?:next|second|third)[\s-]to[\s-]last|second[\s-]last)\s+{_SHEET}"
    rf"(?P<from_end>\s+from\s+the\s+(?:end|back))?\b"
)
# "the first two pages", "the last 3 slides".
_EDGE_PAGES = re.compile(rf"\b(?P<edge>first|last|final|opening|closing)\s+(?P<count>\d{{1,2}}|{_CARDINAL_WORDS})\s+{_SHEET}\b")
# The cover and its kin. "Cover" is also a verb ("does the policy cover floods") and the first
# word of compound nouns that name something else ("the cover letter"), so only the noun after
# a determiner, and not those compounds, names a page.
_COVER = re.compile(
    r"\b(?:(?P<title>title|front)\s+page"
    r"|(?P<back_page>back|rear|last)\s+cover(?:\s+page)?|back\s+page"
    r"|inside\s+(?P<inside>front|back)\s+cover"
    r"|(?:the|its|this|on)\s+(?:front\s+)?cover(?:\s+(?:page|sheet))?(?!\s+(?:letter|note|story|charge|fee|ratio|term)s?\b)"
    r"|cover\s+(?:page|sheet))\b"
)

# What a question about the document itself asks: its date, title, author or issuer.
_DOCUMENT = (
    r"(?:document|report|paper|book|booklet|brochure|letter|memo|memorandum|manual|guide|deck|"
    r"presentation|file|pdf|publication|study|thesis|notice|filing|proposal|bulletin|newsletter|"
    r"circular|leaflet|pamphlet|form|statement|release)"
)
_THE_DOCUMENT = rf"(?:it|(?:the|this|that)\s+{_DOCUMENT})"
_COVER_QUESTION = re.compile(
    rf"\b(?:the|its)\s+(?:{_DOCUMENT}'?s?\s+)?(?:date|title|authors?|issuer|publisher)(?:\s+(?:of|on)\s+{_THE_DOCUMENT})?\s*[?.!]*$"
    rf"|\b(?:date|title|authors?|issuer|publisher)\s+(?:of|on)\s+{_THE_DOCUMENT}\b"
    rf"|\b{_DOCUMENT}'s\s+(?:date|title|authors?|issuer|publisher)\b"
    rf"|\bwhen\s+(?:was|is)\s+{_THE_DOCUMENT}\s+(?:written|issued|published|dated|signed|released|prepared|dated)\b"
    rf"|\bwhat\s+(?:date|day|year)\s+(?:was|is)\s+{_THE_DOCUMENT}\b"
    rf"|\b(?:who|which\s+\w+|what\s+\w+)\s+(?:wrote|authored|issued|signed|prepared|published|released|produced)"
    rf"\s+{_THE_DOCUMENT}\b"
    rf"|\bwho\s+(?:is|are|was|were)\s+the\s+authors?\b"
    rf"|\b(?:written|authored|issued|signed|published|prepared)\s+by\s+whom\b"
)


@dataclass(frozen=True)
class PageMention:
    """One page a question names."""

    kind: Literal["printed", "position", "from_end"]
    label: str  # printed: the number as printed ("14", "iv"); otherwise the count as digits
    phrase: str  # the words that named it, as normalised ("page fourteen"), for warnings

    @property
    def place(self) -> int:
        """The count of a position or from-the-end mention (1 = the first / the last page)."""
        return int(self.label)


@dataclass(frozen=True)
class PageResolution:
    pages: tuple[int, ...]  # physical 1-based pages, in the order the question names them
    missing: tuple[PageMention, ...]  # mentions no page of the document carries


# (start, end, mention): where in the normalised question a mention was found.
_Found = tuple[int, int, PageMention]


def _normalised(question: str) -> str:
    return fold(question).lower()


def _cardinal(words: str) -> int | None:
    """The value of a number in digits or words (up to 999), None for anything else."""
    words = words.strip()
    if words.isdigit():
        return int(words)
    return _spelled(words, "hundred", (_UNITS, _TENS))


def _ordinal(words: str) -> int | None:
    words = words.strip()
    digits = re.fullmatch(r"(\d{1,4})(?:st|nd|rd|th)", words)
    if digits:
        return int(digits.group(1))
    return _spelled(words, "hundredth", (_ORDINAL_UNITS, _ORDINAL_TENS, _TENS, _UNITS)) or None


def _spelled(words: str, hundred: str, tables: tuple[dict[str, int], ...]) -> int | None:
    """The value of a number spelled in words ("twenty-one", "one hundred and fourth"): each
    word is looked up in `tables` in order; `hundred` multiplies what came before."""
    total = 0
    for part in re.split(r"[\s-]+", words):
        if part == "and":
            continue
        if part == hundred:
            total = max(total, 1) * 100
            continue
        value = next((table[part] for table in tables if part in table), None)
        if value is None:
            return None
        total += value
    return total


def _roman(text: str) -> int | None:
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
    if not text or any(c not in values for c in text):
        return None
    total = 0
    for k, c in enumerate(text):
        value = values[c]
        total += -value if k + 1 < len(text) and values[text[k + 1]] > value else value
    return total


def _printed_label(token: str, written: str) -> str | None:
    """The label a printed-number token names: digits as digits, words as digits, a roman
    numeral as written. A lone capital "I" is the pronoun ("on which page I ..."), not one."""
    value = _cardinal(token)
    if value is not None:
        return str(value) if value > 0 else None
    if _roman(token) is not None:
        return None if written == "I" else token
    return None


def _printed(norm: str, original: str) -> list[_Found]:
    found: list[_Found] = []
    for match in _PRINTED.finditer(norm):
        numbers: list[tuple[str | None, str]] = []  # (the join before it, its label)
        for item in _LIST_ITEM.finditer(match.group("list")):
            start = match.start("list") + item.start("number")
            label = _printed_label(item.group("number"), original[start : start + len(item.group("number"))])
            if label is None:
                break
            join = item.group("join")
            numbers.append((join.strip() if join else None, label))
        if not numbers:
            continue
        labels: list[str] = []
        for k, (join, label) in enumerate(numbers):
            previous = numbers[k - 1][1] if k else None
            if join in ("-", "to", "through", "thru") and previous is not None and previous.isdigit() and label.isdigit():
                low, high = int(previous), int(label)
                if high <= low or high - low + 1 > MAX_RANGE_PAGES:
                    labels = labels[:-1]  # a scope, not pages: drop its first end too
                    continue
                labels += [str(n) for n in range(low + 1, high + 1)]
            else:
                labels.append(label)
        phrase = match.group(0).strip()
        found += [(match.start(), match.end(), PageMention("printed", label, phrase)) for label in labels]
    for match in _PRINTED_CJK.finditer(norm):
        if int(match.group(1)) > 0:
            found.append((match.start(), match.end(), PageMention("printed", str(int(match.group(1))), match.group(0))))
    return found


def _positions(norm: str) -> list[_Found]:
    found: list[_Found] = []
    for match in _POSITION.finditer(norm):
        word = match.group("ordinal")
        phrase = match.group(0)
        if word in ("last", "final", "closing"):
            found.append((*match.span(), PageMention("from_end", "1", phrase)))
        elif word in ("opening",):
            found.append((*match.span(), PageMention("position", "1", phrase)))
        elif word in ("penultimate", "second last") or re.fullmatch(r"(?:next|second)[\s-]to[\s-]last|second[\s-]last", word):
            found.append((*match.span(), PageMention("from_end", "2", phrase)))
        elif word == "antepenultimate" or re.fullmatch(r"third[\s-]to[\s-]last", word):
            found.append((*match.span(), PageMention("from_end", "3", phrase)))
        else:
            place = _ordinal(word)
            if place:
                kind: Literal["position", "from_end"] = "from_end" if match.group("from_end") else "position"
                found.append((*match.span(), PageMention(kind, str(place), phrase)))
    for match in _EDGE_PAGES.finditer(norm):
        count = _cardinal(match.group("count"))
        if not count or count > MAX_RANGE_PAGES:
            continue
        kind = "position" if match.group("edge") in ("first", "opening") else "from_end"
        found += [(*match.span(), PageMention(kind, str(n), match.group(0))) for n in range(1, count + 1)]
    for match in _COVER.finditer(norm):
        phrase = match.group(0)
        if match.group("back_page") or phrase.startswith(("back", "rear")):
            found.append((*match.span(), PageMention("from_end", "1", phrase)))
        elif match.group("inside") == "front":
            found.append((*match.span(), PageMention("position", "2", phrase)))
        elif match.group("inside") == "back":
            found.append((*match.span(), PageMention("from_end", "2", phrase)))
        else:
            found.append((*match.span(), PageMention("position", "1", phrase)))
    return found


def find_page_mentions(question: str) -> list[PageMention]:
    """Every distinct page the question names, in order of appearance."""
    return list(_find_page_mentions(question))


_CUE = re.compile(r"page|slide|sheet|\bpp?\.|pg|cover|페이지|쪽|页|頁|ページ", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _found(question: str) -> tuple[_Found, ...]:
    if not _CUE.search(question):  # most questions name no page: skip the full scan
        return ()
    norm = _normalised(question)
    original = fold(question)
    if len(original) != len(norm):  # lower() changed the length (rare scripts): no case test
        original = norm
    # Quoted text is blanked to spaces: the same length, so the spans still index the question.
    norm = _QUOTED.sub(lambda m: " " * len(m.group(0)), norm)
    return tuple(sorted(_printed(norm, original) + _positions(norm), key=lambda item: item[:2]))


@lru_cache(maxsize=4096)
def _find_page_mentions(question: str) -> tuple[PageMention, ...]:
    return tuple(dict.fromkeys(mention for _, _, mention in _found(question)))


@lru_cache(maxsize=4096)
def without_page_mentions(question: str) -> str:
    """The question with the words that name a page taken out ("the fax number on page
    fourteen" -> "the fax number on"): they say where to look, not what about, and a word such as
    "fourteen" or "cover" that the documents do not contain would count as missing evidence."""
    found = _found(question)
    if not found or len(_normalised(question)) != len(question):
        return question
    keep = [True] * len(question)
    for start, stop, _ in found:
        keep[start:stop] = [False] * (stop - start)
    return re.sub(r"\s{2,}", " ", "".join(c if keep[k] else " " for k, c in enumerate(question))).strip()


@lru_cache(maxsize=4096)
def asks_about_the_document(question: str) -> bool:
    """True when the question asks for the document's own date, title, author or issuer, or
    about its cover: what a document prints on its first pages."""
    return _COVER_QUESTION.search(_normalised(question)) is not None


def _label_key(label: str) -> str:
    return label.strip().casefold()


def resolve_pages(
    mentions: Sequence[PageMention], page_count: int, page_labels: Sequence[str] | None = None
) -> PageResolution:
    """The physical pages of a document of `page_count` pages that `mentions` name.

    A printed number is read first as a page label when the document's labels are known
    (`page_labels[k]` is what physical page k + 1 prints: "iv", "36"): a reader quoting "page
    36" quotes the number printed on the page, which is also what a viewer shows for a PDF with
    page labels and what the document's own contents and cross-references use; a report whose
    front matter is numbered i, ii, iii puts its "page 36" on a later physical page. Only when
    no page carries the label is the number read as a physical page. Without labels a printed
    number is the physical page, a roman numeral included (front matter starts at the first
    page). Positions count physical pages from the first or the last. A mention that falls
    outside the document is `missing`, never clamped to a page that exists.
    """
    pages: list[int] = []
    missing: list[PageMention] = []
    labels = [_label_key(label) for label in page_labels] if page_labels else []
    for mention in mentions:
        found: list[int] = []
        if mention.kind == "printed":
            key = _label_key(mention.label)
            found = [k + 1 for k, label in enumerate(labels[:page_count]) if label == key]
            if not found:
                number = int(key) if key.isdigit() else _roman(key)
                if number is not None and 1 <= number <= page_count:
                    found = [number]
        elif mention.kind == "position":
            if 1 <= mention.place <= page_count:
                found = [mention.place]
        elif 1 <= mention.place <= page_count:
            found = [page_count - mention.place + 1]
        if found:
            pages += found
        else:
            missing.append(mention)
    return PageResolution(tuple(dict.fromkeys(pages)), tuple(missing))


def cover_pages(page_count: int) -> tuple[int, ...]:
    """The pages a question about the document itself looks at first."""
    return tuple(range(1, min(COVER_PAGES, page_count) + 1))
