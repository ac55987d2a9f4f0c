"""Is a sentence supported by the page it cites? A score, a verdict and the evidence window.

The page is cut into statements where its layout cuts it (sentence ends, and the seams of
`shared/text/seams.py`: headings, bullets, table rows), and a sentence is compared with the
window of one to three consecutive statements that covers it best. Coverage is measured from
the sentence's side (how much of the sentence the window holds), so a long window does not
penalise a true sentence; negations and one-character tokens such as digits count.

Overlap alone cannot tell a contradiction from a match, so three consistency checks veto:
every quantity of the sentence must be stated in the window (`numbers.py`), every name,
identifier or code token must occur on the page, and polarity must agree (`polarity.py`). A
failed check on a sentence the window otherwise covers is a contradiction; on one it does not
cover, missing support.

A sentence that restates its window with one or two content words replaced ("classified as
payables" against "classified as receivables") passes every check and covers nearly all of its
window; what gives it away is the replaced slot (`substitution.py`). With word vectors, the
slot's two words are compared: a synonym is usually closer than a wrong word, though a
related wrong word ("monthly" for "quarterly") can be as close as a synonym.

The score combines the overlap signals, the checks and the substitution with weights fitted by
logistic regression on a labelled set (`bench/verify.py`, training folds split by document);
the weights and the decision threshold are read from `grounding_fit.json` beside this module,
one fit per source of word vectors (and one without any).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from shared.text.lexical import STOPWORDS, sentences_of, stem
from shared.text.normalize import fold, normalize, tokenize
from shared.text.numbers import NumberMention, number_mentions, unstated
from shared.text.polarity import (
    NEGATIONS,
    PolarityConflict,
    PolarityReading,
    conflict_between,
    polarity_reading,
    polarity_tokens,
    read_polarity,
)
from shared.text.seams import page_seams, split_at_seams
from shared.text.substitution import (
    Substitution,
    WordVectors,
    aligned_words,
    least_similarity,
    slots_between,
)

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
UNSUPPORTED = "unsupported"
MAX_WINDOW = 3
# Windows compared in full after a cheap shortlist by shared vocabulary.
SHORTLIST = 8
# A window whose coverage (words + word pairs) is at least this share of the best one is
# "nearly as close": an alternative evidence window, or the statement a window centres on.
NEAR_BEST = 0.9
# Stopwords count for this much of a content word in coverage: they carry little, but a
# sentence made of the page's content words in another order is not the page.
FUNCTION_WEIGHT = 0.25
FIT_FILE = Path(__file__).with_name("grounding_fit.json")
FEATURES = ("coverage", "bigram_coverage", "char_coverage", "number_missing", "name_missing", "polarity_conflict",
            "substituted", "substitution_distance")
LEXICAL = "lexical"


@dataclass(frozen=True)
class GroundingFit:
    """Logistic weights over FEATURES, the decision threshold on the score, the coverage
    above which a failed check reads as a contradiction rather than missing support, and the
    word vectors the substitution distance was measured with (None: without any, the distance
    of a slot is 1)."""

    weights: dict[str, float]
    bias: float
    threshold: float
    contradiction_coverage: float
    word_vectors: str | None = None

    def score(self, features: dict[str, float]) -> float:
        z = self.bias + sum(self.weights[name] * features[name] for name in FEATURES)
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


class GroundingFitError(RuntimeError):
    """The fitted parameters file is missing or malformed."""


def load_fits(path: Path = FIT_FILE) -> dict[str, GroundingFit]:
    """The fitted weights and thresholds, by source of word vectors (`LEXICAL` for none),
    written by `python -m bench.verify --write-fit`."""
    try:
        raw = json.loads(path.read_text())
        fits = {
            source: GroundingFit(
                weights={name: float(fit["weights"][name]) for name in FEATURES},
                bias=float(fit["bias"]),
                threshold=float(fit["threshold"]),
                contradiction_coverage=float(fit["contradiction_coverage"]),
                word_vectors=None if source == LEXICAL else source,
            )
            for source, fit in raw["fits"].items()
        }
        if LEXICAL not in fits:
            raise KeyError(LEXICAL)
        return fits
    except (OSError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GroundingFitError(
            f"cannot read the verifier's fitted parameters from {path}: {exc}; "
            "regenerate them with `python -m bench.verify --write-fit`"
        ) from exc


@lru_cache(maxsize=1)
def _fits() -> dict[str, GroundingFit]:
    return load_fits()


def default_fit(word_vectors: str | None = None) -> GroundingFit:
    """The shipped fit for these word vectors; the lexical one for vectors it was not fitted
    with (their similarities would not mean what the weights expect)."""
    fits = _fits()
    return fits.get(word_vectors or LEXICAL, fits[LEXICAL])




def _split_numbers(text: str) -> tuple[list[str], tuple[NumberMention, ...]]:
    """Word tokens without the quantities, and the quantities: "$1.6 billion" and "1,600
    million" are one quantity each, compared by value, not as the tokens "1", "6", "600"."""
    mentions = number_mentions(text)
    if not mentions:
        return polarity_tokens(text), mentions
    folded = fold(text)
    pieces, cursor = [], 0
    for m in mentions:
        pieces.append(folded[cursor : m.start])
        cursor = m.end
    pieces.append(folded[cursor:])
    return polarity_tokens(" ".join(pieces)), mentions


def _weight(token: str) -> float:
    return FUNCTION_WEIGHT if token in STOPWORDS and token not in NEGATIONS else 1.0


def _char_grams(text: str, n: int = 4) -> set[str]:
    return _grams_of(tokenize(text), n)


def _grams_of(words: Sequence[str], n: int = 4) -> set[str]:
    return _grams_in(" ".join(words), n)


def _grams_in(flat: str, n: int = 4) -> set[str]:
    # Every run of n characters: the i-th characters of n shifted copies, joined (in C).
    return set(map("".join, zip(*(flat[k:] for k in range(n)), strict=False)))


@dataclass(frozen=True)
class Window:
    """One to three consecutive statements of a page, with their offsets in the page text."""

    text: str
    start: int
    end: int
    width: int
    pieces: tuple[str, ...] = field(repr=False)  # its statements' texts
    piece_tokens: tuple[list[str], ...] = field(repr=False)  # their word tokens (`_split_numbers`)
    piece_numbers: tuple[tuple[NumberMention, ...], ...] = field(repr=False)  # their quantities

    # Read on first use: a check measures a few windows of a page in full, not all of them
    # (`PreparedPage` finds the windows holding a token without these).
    @cached_property
    def tokens(self) -> Counter[str]:
        return Counter(t for tokens in self.piece_tokens for t in tokens)

    @cached_property
    def bigrams(self) -> frozenset[tuple[str, str]]:
        tokens = [t for piece in self.piece_tokens for t in piece]
        return frozenset(zip(tokens, tokens[1:], strict=False))

    @cached_property
    def numbers(self) -> tuple[NumberMention, ...]:
        return tuple(n for found in self.piece_numbers for n in found)

    @cached_property
    def words(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """For the substitution slots (`aligned_words`)."""
        read = [aligned_words(piece) for piece in self.pieces]
        return tuple(w for r in read for w in r[0]), tuple(w for r in read for w in r[1])

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        return frozenset(self.tokens)

    @cached_property
    def polarity(self) -> PolarityReading:
        return polarity_reading(self.text)


@dataclass(frozen=True)
class Statement:
    text: str
    start: int
    end: int


def _spaced(page: str) -> tuple[str, list[int]]:
    """The page with each run of whitespace as one space, and the page offset of each of its
    characters (the splitter's pieces are spaced so)."""
    text: list[str] = []
    where: list[int] = []
    for match in re.finditer(r"\S+|\s+", page):
        if match.group().isspace():
            text.append(" ")
            where.append(match.start())
        else:
            text.append(match.group())
            where.extend(range(match.start(), match.end()))
    return "".join(text), where


def _word_at(page: str, word: str, cursor: int) -> int:
    """Where `word` next starts as a word (not inside a longer one) from `cursor`; -1 if nowhere."""
    at = page.find(word, cursor)
    while at > 0 and page[at - 1].isalnum() and word[:1].isalnum():
        at = page.find(word, at + 1)
    return at


def _locate(page: str, pieces: list[str]) -> list[Statement]:
    """Character offsets of each piece in the page: exact wherever the piece is the page's text
    (whitespace aside), searched from the last piece on, then anywhere; approximate, from its
    first and last words, where the splitter rewrote it (a word joined across a hyphenated
    line break), and then without moving the search past the pieces that follow."""
    spaced, where = _spaced(page)
    out: list[Statement] = []
    cursor = 0  # in `spaced`
    for piece in pieces:
        wanted = " ".join(piece.split())
        at = spaced.find(wanted, cursor) if wanted else -1
        if at < 0 and wanted:
            at = spaced.find(wanted)
        if at >= 0:
            out.append(Statement(piece, where[at], where[at + len(wanted) - 1] + 1))
            cursor = at + len(wanted)
            continue
        words = piece.split() or [piece]
        from_page = where[cursor] if cursor < len(where) else len(page)
        start = _word_at(page, words[0], from_page)
        if start < 0:
            start = from_page
        slack = len(piece) // 8 + 8
        last = page.find(words[-1], max(start, start + len(piece) - len(words[-1]) - slack))
        end = last + len(words[-1]) if last >= 0 and last - start < 2 * len(piece) + 20 else min(start + len(piece), len(page))
        out.append(Statement(piece, start, end))
    return out


@lru_cache(maxsize=2048)
def statements(page: str) -> tuple[Statement, ...]:
    """The page cut at sentence ends and at its layout seams, with offsets."""
    seams = page_seams(page)
    pieces = [p for sentence in sentences_of(page) for p in split_at_seams(sentence, seams) if p.strip()]
    return tuple(_locate(page, pieces or [page]))


class PageWindows(Sequence[Window]):
    """The windows of one to three consecutive statements of a page, by first statement, then
    width. A window is built when first read: a check measures a few windows of a page in full,
    and finds the windows holding a token from the statements' tokens (`WindowHolders`)."""

    def __init__(self, page: str) -> None:
        units = statements(page)
        split = [_split_numbers(u.text) for u in units]
        self.texts = tuple(u.text for u in units)  # each statement's text
        self.tokens = tuple(tokens for tokens, _ in split)  # each statement's word tokens
        self.numbers = tuple(found for _, found in split)  # each statement's quantities
        self._statement_starts = [u.start for u in units]
        self._statement_ends = [u.end for u in units]
        count = len(units)
        per_first = np.minimum(MAX_WINDOW, count - np.arange(count))
        self.firsts = np.repeat(np.arange(count), per_first)
        self.widths = np.arange(len(self.firsts)) - np.repeat(np.cumsum(per_first) - per_first, per_first) + 1
        lasts = self.firsts + self.widths - 1
        self.starts = np.array(self._statement_starts, dtype=np.int64)[self.firsts]
        self.ends = np.array(self._statement_ends, dtype=np.int64)[lasts]
        self._built: dict[int, Window] = {}
        self._statement_words: dict[int, tuple[str, frozenset[str]]] = {}
        self._grams: dict[int, frozenset[str]] = {}  # by window

    def __len__(self) -> int:
        return len(self.firsts)

    def __iter__(self) -> Iterator[Window]:
        return map(self.__getitem__, range(len(self)))

    def __getitem__(self, index: int) -> Window:  # type: ignore[override]  # integer indices only
        window = self._built.get(index)
        if window is None:
            if not 0 <= index < len(self):
                raise IndexError(index)
            first = int(self.firsts[index])
            last = first + int(self.widths[index])
            pieces = self.texts[first:last]
            window = Window(" ".join(pieces), self._statement_starts[first], self._statement_ends[last - 1],
                            last - first, pieces, self.tokens[first:last], self.numbers[first:last])
            self._built[index] = window
        return window

    def grams(self, index: int) -> frozenset[str]:
        """The character 4-grams of window `index`'s words (as `_char_grams` reads its text),
        from its statements': the window's words are its statements' words in turn (no token
        spans the space joining two statements), so each 4-gram lies within one statement's
        words or within three characters either side of a join."""
        grams = self._grams.get(index)
        if grams is None:
            first = int(self.firsts[index])
            said = [self._words(k) for k in range(first, first + int(self.widths[index]))]
            flats = [flat for flat, _ in said if flat]
            found = set().union(*(statement_grams for _, statement_grams in said))
            joined, join = " ".join(flats), -1
            for flat in flats[:-1]:
                join += len(flat) + 1
                found |= _grams_in(joined[max(join - 3, 0) : join + 4])
            grams = self._grams[index] = frozenset(found)
        return grams

    def _words(self, statement: int) -> tuple[str, frozenset[str]]:
        """A statement's words, space-delimited, and their character 4-grams."""
        words = self._statement_words.get(statement)
        if words is None:
            flat = " ".join(tokenize(self.texts[statement]))
            words = self._statement_words[statement] = (flat, frozenset(_grams_in(flat)))
        return words


def page_windows(page: str) -> tuple[Window, ...]:
    """Windows of one to three consecutive statements of the page (read lazily through
    `prepared_page`)."""
    return tuple(PageWindows(page))


@dataclass(frozen=True)
class Matches:
    """What each window of a page holds of one sentence (arrays indexed by window)."""

    shared: np.ndarray  # distinct tokens in common
    held: np.ndarray  # the sentence's tokens held, weighted as in coverage (quantities aside)
    pairs: np.ndarray  # the sentence's word pairs held


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct keys, sorted: `np.unique` without counts hashes first, several times slower
    on a page's few thousand keys than one sort."""
    ordered = np.sort(keys)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


@dataclass(frozen=True)
class WindowHolders:
    """Which windows of a page hold each token (and how often) and each word pair. Every
    (key, window) of the page is one integer, key number × windows + window, and they are
    sorted: the windows holding a key are one slice of them, in window order."""

    numbers: dict[str, int]  # token -> its number on the page
    windows: int
    token_keys: np.ndarray
    token_counts: np.ndarray
    pair_keys: np.ndarray

    @classmethod
    def of(cls, windows: PageWindows) -> WindowHolders:
        """From the statements' tokens: a window's tokens are those of its consecutive
        statements, one run of the page's tokens laid statement after statement."""
        numbers: dict[str, int] = {}
        statements = windows.tokens
        laid = np.array([numbers.setdefault(t, len(numbers)) for tokens in statements for t in tokens], dtype=np.int64)
        offsets = np.cumsum([0, *map(len, statements)])
        starts, stops = offsets[windows.firsts], offsets[windows.firsts + windows.widths]
        lengths = stops - starts
        size = len(windows)
        owner = np.repeat(np.arange(size, dtype=np.int64), lengths)
        sequence = laid[np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths - starts, lengths)]
        token_keys, token_counts = np.unique(sequence * size + owner, return_counts=True)
        same = owner[1:] == owner[:-1]  # consecutive tokens of one window form a word pair
        pairs = (sequence[:-1][same] * len(numbers) + sequence[1:][same]) * size + owner[1:][same]
        return cls(numbers, size, token_keys, token_counts, _distinct(pairs))

    def _slice(self, keys: np.ndarray, key: int) -> slice:
        return slice(int(np.searchsorted(keys, key * self.windows)), int(np.searchsorted(keys, (key + 1) * self.windows)))

    def token(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(the windows holding the token, how often each holds it), or None."""
        number = self.numbers.get(token)
        if number is None:
            return None
        found = self._slice(self.token_keys, number)
        return self.token_keys[found] - number * self.windows, self.token_counts[found]

    def pair(self, pair: tuple[str, str]) -> np.ndarray | None:
        """The windows holding the word pair, or None."""
        first, second = self.numbers.get(pair[0]), self.numbers.get(pair[1])
        if first is None or second is None:
            return None
        key = first * len(self.numbers) + second
        found = self._slice(self.pair_keys, key)
        return self.pair_keys[found] - key * self.windows if found.stop > found.start else None


@dataclass(frozen=True)
class PreparedPage:
    """Everything a check reads of a page, computed once per page: its windows, which windows
    hold each token and word pair (so a sentence is compared with every window at once), where
    the single statements lie (for a window's core), the page's vocabulary and its names. A page
    cited by many sentences costs this once; each sentence then costs only its own comparison.
    What only the few windows measured in full need (polarity, character 4-grams) each window
    reads when first asked."""

    windows: PageWindows
    holders: WindowHolders = field(repr=False)
    spans: np.ndarray = field(repr=False)  # each window's length in characters
    units: np.ndarray = field(repr=False)  # indices of the one-statement windows
    unit_starts: np.ndarray = field(repr=False)
    unit_ends: np.ndarray = field(repr=False)
    key: str = field(repr=False)  # the page's words, space-delimited, for `missing_names`
    page: str = field(repr=False)

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """The page's word tokens, quantities aside (read when a reason names novel words)."""
        return _page_vocabulary(self.page)

    @classmethod
    def of(cls, page: str) -> PreparedPage:
        windows = PageWindows(page)
        units = np.flatnonzero(windows.widths == 1)
        return cls(windows, WindowHolders.of(windows), windows.ends - windows.starts, units,
                   windows.starts[units], windows.ends[units], _page_key(page), page)

    def matches(self, sentence: _Sentence) -> Matches:
        """What every window holds of the sentence. A token said once is held with its weight
        by every window holding it; the weights (1 and FUNCTION_WEIGHT, a power of two) make
        every sum exact whatever the order of addition."""
        size = len(self.windows)
        content: list[np.ndarray] = []
        function: list[np.ndarray] = []
        repeated: list[np.ndarray] = []
        repeated_held: list[np.ndarray] = []
        for token, count, weight in sentence.weighted:
            holders = self.holders.token(token)
            if holders is None:
                continue
            if count > 1:
                repeated.append(holders[0])
                repeated_held.append(weight * np.minimum(holders[1], count))
            else:
                (content if weight == 1.0 else function).append(holders[0])
        once, once_function, more = _count(content, size), _count(function, size), _count(repeated, size)
        held = once + FUNCTION_WEIGHT * once_function + _count(repeated, size, repeated_held)
        pairs = [h for h in map(self.holders.pair, sentence.pairs) if h is not None]
        return Matches(once + once_function + more, held, _count(pairs, size))

    def shortlist(self, matches: Matches, size: int) -> list[int]:
        """The `size` windows sharing the most distinct tokens with the sentence, ties to the
        shorter window, then to the earlier one."""
        # One integer key, most shared first, then shortest; a stable sort keeps page order.
        spread = int(self.spans.max() - self.spans.min()) + 1
        key = self.spans - matches.shared.astype(np.int64) * spread
        shortlisted: list[int] = np.argsort(key, kind="stable")[:size].tolist()
        return shortlisted

    def units_within(self, index: int) -> list[int]:
        """The one-statement windows inside window `index` (none when it is one statement)."""
        window = self.windows[index]
        if window.width == 1:
            return []
        inside = (self.unit_starts >= window.start) & (self.unit_ends <= window.end)
        units: list[int] = self.units[inside].tolist()
        return units


def _count(found: list[np.ndarray], size: int, weights: list[np.ndarray] | None = None) -> np.ndarray:
    """How many of `found` (arrays of window indices) name each window, or their weights' sum."""
    if not found:
        return np.zeros(size)
    return np.bincount(np.concatenate(found), weights=np.concatenate(weights) if weights else None, minlength=size)


@lru_cache(maxsize=512)
def prepared_page(page: str) -> PreparedPage:
    """The page prepared for checking (memoised per page)."""
    return PreparedPage.of(page)


def prepared_windows(page: str) -> Sequence[Window]:
    """The windows of a prepared page."""
    return prepared_page(page).windows


@dataclass(frozen=True)
class _Sentence:
    """What every window is compared with, computed once per sentence."""

    counts: Counter[str]
    weighted: tuple[tuple[str, int, float], ...]  # (token, count, weight) in the order of `counts`
    total: float  # weighted token count, each quantity counting one
    pairs: tuple[tuple[str, str], ...]
    numbers: tuple[NumberMention, ...]
    grams: frozenset[str]
    vocabulary: frozenset[str]

    @classmethod
    def of(cls, tokens: list[str], numbers: tuple[NumberMention, ...], words: tuple[str, ...]) -> _Sentence:
        counts = Counter(tokens)
        total = sum(_weight(t) * n for t, n in counts.items()) + len(numbers) or 1.0
        return cls(counts, tuple((t, n, _weight(t)) for t, n in counts.items()), total,
                   tuple(zip(tokens, tokens[1:], strict=False)), numbers, frozenset(_grams_of(words)),
                   frozenset(counts))


def _overlap(
    sentence: _Sentence, matches: Matches, index: int, grams: frozenset[str], missing: int
) -> tuple[float, float, float]:
    """Shares of the sentence's (weighted) tokens, bigrams and character 4-grams that window
    `index` holds; each quantity counts as one token, held when the window states it (all but
    `missing` of them)."""
    held = float(matches.held[index]) + (len(sentence.numbers) - missing)
    coverage = held / sentence.total
    pairs = sentence.pairs
    bigram = int(matches.pairs[index]) / len(pairs) if pairs else coverage
    chars = len(sentence.grams & grams) / len(sentence.grams) if sentence.grams else 0.0
    return coverage, bigram, chars


# A name: capitalised inside a sentence, all capitals, mixed case, or a code token (holding
# "_", a dot between letters, or letters and digits together).
_CANDIDATE = re.compile(r"[A-Za-z0-9_][\w.\-/:]*[\w]|[A-Za-z]")
_CODE = re.compile(r"_|[a-z]\.[a-z]|[A-Za-z]\d|\d[A-Za-z]|[a-z][A-Z]|\(\)|^\d+(?:\.\d+){2,}$")


_PLAIN_NUMBER = re.compile(r"[\d,]+(?:\.\d+)?")


def names_of(sentence: str) -> list[str]:
    """Names, identifiers and code tokens of a sentence, as written."""
    found: list[str] = []
    for m in _CANDIDATE.finditer(sentence):
        word = m.group(0).rstrip(".-/:")
        if word.isalpha() and word.islower():
            continue  # letters in lower case only: neither code nor capitalised (most words)
        code = bool(_CODE.search(word)) and not _PLAIN_NUMBER.fullmatch(word)
        capital = False
        if word[:1].isupper():
            before = sentence[: m.start()].rstrip().rstrip("\"'\u201c(")
            initial = not before or before[-1] in ".:!?;"
            capital = not initial or sum(c.isupper() for c in word) > 1
        if (code or capital) and len(word) > 1 and word.lower() not in STOPWORDS:
            found.append(word)
    return list(dict.fromkeys(found))


@lru_cache(maxsize=2048)
def _page_vocabulary(page: str) -> frozenset[str]:
    return frozenset(_split_numbers(page)[0])


def novel_words(tokens: list[str], page: str) -> list[str]:
    """The sentence's content words (stemmed) that occur nowhere on the page. Named in the
    reason of an unsupported sentence; not a score feature: a word swapped for another and a
    synonym look the same to a lexical check (measured in `bench/verify.py`, kind `word`)."""
    return _novel(tokens, _page_vocabulary(page))


def _novel(tokens: list[str], vocabulary: frozenset[str]) -> list[str]:
    return [t for t in dict.fromkeys(tokens)
            if len(t) >= 3 and t not in STOPWORDS and t not in NEGATIONS and t not in vocabulary]


_NON_WORD = re.compile(r"[\W_]+")


@lru_cache(maxsize=2048)
def _page_key(page: str) -> str:
    return " " + " ".join(_NON_WORD.split(normalize(page))) + " "


def missing_names(sentence: str, page: str) -> list[str]:
    """The sentence's names that never occur on the page (as whole words)."""
    return _names_missing_from(sentence, _page_key(page))


def _names_missing_from(sentence: str, key: str) -> list[str]:
    out = []
    for name in names_of(sentence):
        probe = " " + " ".join(w for w in _NON_WORD.split(normalize(name)) if w) + " "
        if probe.strip() and probe not in key:
            out.append(name)
    return out


@dataclass(frozen=True)
class Grounding:
    """The verdict on one sentence against one page."""

    score: float
    verdict: str
    reason: str
    window: str
    start: int
    end: int
    features: dict[str, float]

    @property
    def supported(self) -> bool:
        return self.verdict == SUPPORTED


def _number_reason(missing: list[NumberMention], window: str) -> str:
    stated = [n.text for n in number_mentions(window)]
    said = ", ".join(n.text for n in missing)
    if stated:
        return f"the sentence says {said}; the source says {', '.join(stated[:4])}"
    return f"the source does not state {said}"


def _substitution_reason(slot: Substitution) -> str:
    return f"the sentence says {' '.join(slot.said)!r} where the source says {' '.join(slot.source)!r}"


class _Comparisons:
    """One sentence's comparison with each window of a page, computed at most once: the
    shortlist, the cores of the best windows and the alternatives read the same windows again."""

    def __init__(self, said: _Sentence, quantities: tuple[NumberMention, ...], reading: PolarityReading,
                 prepared: PreparedPage) -> None:
        self.said = said
        self.quantities = quantities
        self.reading = reading
        self.prepared = prepared
        self.windows = prepared.windows
        self.matches = prepared.matches(said)
        self._missing: dict[int, list[NumberMention]] = {}
        self._agreed: dict[tuple[int, int], bool] = {}
        self._overlap: dict[int, tuple[float, float, float]] = {}
        self._conflict: dict[int, PolarityConflict | None] = {}

    def _agree(self, said: NumberMention, stated: NumberMention) -> bool:
        # Windows share their statements' quantities: each pair is compared once.
        key = (id(said), id(stated))
        if key not in self._agreed:
            self._agreed[key] = said.agrees_with(stated)
        return self._agreed[key]

    def missing(self, index: int) -> list[NumberMention]:
        if index not in self._missing:
            self._missing[index] = (unstated(self.quantities, self.windows[index].numbers, self._agree)
                                    if self.quantities else [])
        return self._missing[index]

    def overlap(self, index: int) -> tuple[float, float, float]:
        if index not in self._overlap:
            self._overlap[index] = _overlap(self.said, self.matches, index, self.windows.grams(index),
                                            len(self.missing(index)))
        return self._overlap[index]

    def conflict_with(self, index: int) -> PolarityConflict | None:
        if index not in self._conflict:
            self._conflict[index] = conflict_between(self.reading, self.windows[index].polarity)
        return self._conflict[index]

    def checks(self, candidate: int, best_total: float) -> tuple[list[NumberMention], PolarityConflict | None]:
        """The quantities the window leaves unstated and its polarity conflict. A statement
        inside the window that alone covers the sentence nearly as well is what the sentence
        restates: a figure or direction word found only in a neighbouring statement does not
        support it."""
        core = [candidate]
        for unit in self.prepared.units_within(candidate):
            unit_coverage, unit_bigram, _ = self.overlap(unit)
            if unit_coverage + unit_bigram >= NEAR_BEST * best_total:
                core.append(unit)
        found = next((m for m in (self.missing(c) for c in core) if m), [])
        conflict = next((c for c in (self.conflict_with(c) for c in core) if c), None)
        return found, conflict


def _substitution_distance(slots: list[Substitution], vectors: WordVectors | None) -> float:
    if not slots:
        return 0.0
    if vectors is None:
        return 1.0
    return 1.0 - max(least_similarity(slots, vectors), 0.0)


def ground(sentence: str, page: str, fit: GroundingFit | None = None, words: WordVectors | None = None) -> Grounding:
    """How well `page` supports `sentence`: the best window, the checks and the verdict.
    `words` gives the substitution's similarity when the fit was made with the same vectors."""
    fit = fit or default_fit(words.name if words else None)
    vectors = words if words is not None and fit.word_vectors == words.name else None
    quantities = number_mentions(sentence)
    reading = read_polarity(sentence)
    # Without quantities, the sentence's tokens are the stems its polarity reading holds.
    tokens = list(reading.tokens) if not quantities else _split_numbers(sentence)[0]
    prepared = prepared_page(page) if page.strip() else None
    windows = prepared.windows if prepared is not None else ()
    if not (tokens or quantities) or prepared is None or not windows:
        features = dict.fromkeys(FEATURES, 0.0)
        return Grounding(0.0, UNSUPPORTED, "nothing to compare: empty sentence or page", "", 0, 0, features)
    sentence_words = aligned_words(sentence)
    compared = _Comparisons(_Sentence.of(tokens, quantities, sentence_words[0]), quantities, reading, prepared)
    # Shortlist by shared vocabulary (cheap), then measure the few best in full; ties go to
    # the shorter window, the tighter evidence.
    shortlist = prepared.shortlist(compared.matches, SHORTLIST)
    measured = sorted(((compared.overlap(i), i) for i in shortlist),
                      key=lambda item: (-item[0][0] - item[0][1], windows[item[1]].end - windows[item[1]].start))
    names = _names_missing_from(sentence, prepared.key)
    (coverage, bigram, chars), best = measured[0]
    best_total = coverage + bigram
    numbers, conflict = compared.checks(best, best_total)
    if numbers or conflict:
        # Another window nearly as close may state the quantity or agree in polarity.
        for other_overlap, other in measured[1:]:
            if other_overlap[0] + other_overlap[1] < NEAR_BEST * best_total:
                break
            if compared.checks(other, best_total) == ([], None):
                (coverage, bigram, chars), best = other_overlap, other
                numbers, conflict = [], None
                break
    window = windows[best]
    slots = slots_between(sentence_words, window.words)
    features = {
        "coverage": round(coverage, 4),
        "bigram_coverage": round(bigram, 4),
        "char_coverage": round(chars, 4),
        "number_missing": float(bool(numbers)),
        "name_missing": float(bool(names)),
        "polarity_conflict": float(conflict is not None),
        "substituted": float(bool(slots)),
        "substitution_distance": round(_substitution_distance(slots, vectors), 4),
    }
    score = round(fit.score(features), 4)
    problems = []
    if numbers:
        problems.append(_number_reason(numbers, window.text))
    if names:
        problems.append(f"the page never mentions {', '.join(names[:3])}")
    if conflict is not None:
        problems.append(conflict.reason)
    verdict, reason = _verdict(problems, coverage, score >= fit.threshold, fit, slots)
    if verdict == UNSUPPORTED and not problems and not slots:
        novel = _novel(tokens, prepared.vocabulary)
        if novel:
            written = {stem(w): w for w in reversed(tokenize(sentence))}
            reason += f"; the page never uses {', '.join(repr(written.get(w, w)) for w in novel[:3])}"
    return Grounding(score, verdict, reason, window.text, window.start, window.end, features)


def _verdict(problems: list[str], coverage: float, passes: bool, fit: GroundingFit,
             slots: list[Substitution]) -> tuple[str, str]:
    if problems:
        return (CONTRADICTED if coverage >= fit.contradiction_coverage else UNSUPPORTED), "; ".join(problems)
    if passes:
        return SUPPORTED, f"the window covers {coverage:.0%} of the sentence"
    if slots:
        # A replaced word is not proof of a contradiction (it may be an unrecognised synonym):
        # missing support, with the words named so a reader can judge.
        return UNSUPPORTED, _substitution_reason(slots[0])
    return UNSUPPORTED, f"the best window covers only {coverage:.0%} of the sentence"
