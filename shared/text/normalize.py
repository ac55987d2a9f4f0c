"""Text normalisation shared by every stage: indexing, verification, navigation, answers.

One place decides what "the same text" means, so a title matched at indexing time is matched
the same way when a question is scored against it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Ligatures that NFKC leaves alone or that some PDF producers emit as private glyphs.
_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
    "\u0132": "IJ",
    "\u0133": "ij",
    "\u0152": "OE",
    "\u0153": "oe",
    "\u00c6": "AE",
    "\u00e6": "ae",
}
_PUNCT_FOLD = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u00a0": " ",
    "\u00ad": "",  # soft hyphen: only marks a possible break
    "\ufffe": "",
    "\ufeff": "",
    "\u200b": "",
}
_FOLDS = {**_LIGATURES, **_PUNCT_FOLD}
# A regex over the few folded characters: far faster than str.translate with a dict.
_FOLDABLE = re.compile("[" + "".join(_FOLDS) + "]")


def _fold_chars(text: str) -> str:
    return _FOLDABLE.sub(lambda m: _FOLDS[m.group(0)], text)

# A word broken across a line end: "infor-\nmation" -> "information". pdfium marks such breaks
# with \x02 (soft hyphen at line end) in extracted text.
_HYPHEN_BREAK = re.compile(r"(\w)([-\x02])\s*\n\s*(\w)")
# What every hyphen break holds; searched first because it is found several times faster than
# the whole pattern (which tries a word character at every position), and most text has none.
_BREAK_AT_LINE_END = re.compile(r"[-\x02]\s*\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# The dots that lead a contents or index entry to its page number ("2 Valves ........ 7").
DOT_LEADER = re.compile(r"(?:\.\s?){5,}")

# Scripts tokenised without spaces: Han ideographs, kana; Hangul is space-delimited but
# agglutinative, so its runs are also split into bigrams to match particles-attached forms.
_CJK_RANGES = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x31F0, 0x31FF),  # katakana extensions
    (0x3400, 0x4DBF),  # CJK ext A
    (0x4E00, 0x9FFF),  # CJK unified
    (0xF900, 0xFAFF),  # CJK compatibility
    (0xFF66, 0xFF9F),  # halfwidth katakana
    (0x20000, 0x2FA1F),  # CJK ext B..
)
_HANGUL_RANGES = (
    (0xAC00, 0xD7AF),  # syllables
    (0x1100, 0x11FF),  # jamo
    (0x3130, 0x318F),  # compatibility jamo
)


def _in_ranges(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= code <= hi for lo, hi in ranges)


@lru_cache(maxsize=4096)
def _char_class(ch: str) -> str:
    """'c' CJK, 'h' Hangul, 'w' other word character, ' ' separator."""
    code = ord(ch)
    if code < 0x3000:
        return "w" if (ch.isalnum() or ch == "_") else " "
    if _in_ranges(code, _CJK_RANGES):
        return "c"
    if _in_ranges(code, _HANGUL_RANGES):
        return "h"
    return "w" if ch.isalnum() else " "


def fold(text: str) -> str:
    """Unicode compatibility form with ligatures, dashes and quotes folded; case kept."""
    text = _fold_chars(text)
    text = unicodedata.normalize("NFKC", text)
    return text


def _mend_break(match: re.Match[str]) -> str:
    before, hyphen, after = match.groups()
    # pdfium marks a hyphen it knows to be the typesetter's (\x02); a printed hyphen breaks a
    # word only between letters going on in lower case ("manage-\nment"), and is the word's
    # own before a capital or a digit ("Form 10-\nK", "non-\nGAAP", "2019-\n2020").
    if hyphen == "\x02" or (before.isalpha() and after.islower()):
        return before + after
    return before + "-" + after


def dehyphenate(text: str) -> str:
    """Join words broken by a hyphen at a line end; a compound's own hyphen is kept, its line
    break dropped."""
    if _BREAK_AT_LINE_END.search(text):
        text = _HYPHEN_BREAK.sub(_mend_break, text)
    return text.replace("\x02", "")


def normalize(text: str) -> str:
    """Canonical form for comparing text: folded, de-hyphenated, lower case, single spaces."""
    if text.isascii():  # nothing to fold: skip the Unicode passes (most text, much faster)
        if "\n" in text and ("-" in text or "\x02" in text):
            text = dehyphenate(text)
        return " ".join(text.split()).lower()
    text = dehyphenate(_fold_chars(text))
    text = unicodedata.normalize("NFKC", text)
    text = _CONTROL.sub(" ", text)
    # str.split splits at exactly the characters `\s` matches, several times faster.
    return " ".join(text.split()).casefold()


_CJK_CLASS = r"\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_HANGUL_CLASS = r"\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
_OTHER_WORD = rf"[^\W_{_CJK_CLASS}{_HANGUL_CLASS}]+"
_WORD_OR_SCRIPT = re.compile(
    rf"[{_CJK_CLASS}]+|[{_HANGUL_CLASS}]+|{_OTHER_WORD}(?:['.]{_OTHER_WORD})*",
    re.UNICODE,
)


_ASCII_WORD = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*")
# Words where no script is segmented: `_WORD_OR_SCRIPT` matches the same there, more slowly.
_WORD = re.compile(r"[^\W_]+(?:['.][^\W_]+)*")
# The scripts `_char_class` reads as CJK or Hangul, whose runs `tokenize` segments.
_SEGMENTED = re.compile(
    "[" + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in _CJK_RANGES + _HANGUL_RANGES) + "]"
)


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """Lower-case word tokens.

    Latin/Cyrillic/etc. words are whole tokens (internal apostrophes and dots kept, so
    "don't" and "3.2" stay one token). Han/kana runs become character bigrams, the usual
    dictionary-free segmentation. Hangul runs (eojeol) are kept whole and also split into
    syllable bigrams, so "계약서를" still matches "계약서".
    """
    normal = normalize(text)
    if normal.isascii():
        return _ASCII_WORD.findall(normal)  # the pattern never starts or ends on . or '
    if not _SEGMENTED.search(normal):
        # Every match is then a whole word, which never starts or ends on . or ': the loop
        # below would keep each as it is.
        return _WORD.findall(normal)
    tokens: list[str] = []
    for match in _WORD_OR_SCRIPT.finditer(normal):
        run = match.group(0)
        kind = _char_class(run[0])
        if kind == "c":
            tokens.extend(_bigrams(run))
        elif kind == "h":
            tokens.append(run)
            if len(run) > 1:
                tokens.extend(_bigrams(run))
        else:
            tokens.append(run.strip(".'"))
    return [t for t in tokens if t]


# Sentence end: ., !, ? (optionally followed by closing quotes/brackets) then whitespace and a
# capital, digit or opening quote; or CJK full stops, which need no following space.
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]\u201d\u2019]))\s+(?=[\"'(\[\u201c\u2018]?[A-Z0-9\u00c0-\u024f\u0370-\u04ff"
    r"\uac00-\ud7af\u3040-\u30ff\u4e00-\u9fff])"
    r"|(?<=[\u3002\uff01\uff1f\uff0e])\s*"
)
_PARAGRAPH = re.compile(r"\n\s*\n")
# Abbreviations that end with a dot but do not end a sentence.
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf fig figs eq eqs no nos vol pp p ed eds al dr mr mrs ms prof st sec art"
    " inc ltd co corp jr sr approx dept est min max resp ref refs ch app".split()
)


def _ends_with_abbreviation(sentence: str) -> bool:
    last = sentence.rsplit(" ", 1)[-1]
    if not last.endswith("."):
        return False
    word = last[:-1].lstrip("(\"'").lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences (Latin punctuation, CJK full stops, blank lines).

    Line breaks inside a paragraph are treated as spaces; hyphenated line breaks are joined.
    Common abbreviations ("e.g.", "Fig.", "Sec.") and single initials do not end a sentence.
    """
    text = dehyphenate(text if text.isascii() else fold(text))
    sentences: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        carry = ""
        for piece in _SENTENCE_END.split(paragraph):
            if not piece:
                continue
            joined = f"{carry} {piece}" if carry else piece
            if _ends_with_abbreviation(joined):
                carry = joined
                continue
            sentences.append(joined)
            carry = ""
        if carry:
            sentences.append(carry)
    return sentences


def title_key(title: str) -> str:
    """Key for comparing section titles: normalised, punctuation and leading numbering kept
    only as words, so "1.2  Data  Model" and "1.2 Data model" compare equal."""
    return " ".join(_WORD_OR_SCRIPT.findall(normalize(title)))


_NON_WORD = re.compile(r"[\W_]+")


def compact(text: str) -> str:
    """Normalised text with every space and punctuation mark removed: for substring checks
    that must survive line breaks, spacing quirks and punctuation differences."""
    return _NON_WORD.sub("", normalize(text))


__all__ = ["compact", "dehyphenate", "fold", "normalize", "split_sentences", "title_key", "tokenize"]
