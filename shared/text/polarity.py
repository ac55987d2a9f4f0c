"""Polarity: whether a sentence says the opposite of its evidence.

Two ways a sentence can overlap its source word for word and still contradict it: a negation
added or dropped ("is an error" / "is not an error"), or a direction word turned around
("increased" / "decreased", "before" / "after"). A negation is tied to the word it governs (the
next content word), so "X is not used" and "X is never used" agree, and a negation elsewhere
in the evidence does not excuse one the sentence adds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from shared.text.lexical import STOPWORDS, stem
from shared.text.normalize import normalize, tokenize

NEGATIONS = frozenset(
    "not no never none nor neither cannot without nothing nobody nowhere non unable".split()
)
# "doesn't" → "does" + not; "can't", "won't" keep their verb.
_CONTRACTION = re.compile(r"\b(ca|wo|do|does|did|is|are|was|were|has|have|had|should|would|could|must|need)n't\b")
_IRREGULAR = {"can't": "can not", "won't": "will not", "cannot": "can not", "shan't": "shall not"}
# Governed word: the first content word within this many tokens after a negation.
SCOPE = 4

# Direction words and their opposites, as stems; a pair is listed once.
_OPPOSITE_PAIRS = (
    ("increase", "decrease"), ("increase", "reduce"), ("rise", "fall"), ("gain", "loss"),
    ("higher", "lower"), ("more", "less"), ("more", "fewer"), ("larger", "smaller"),
    ("greater", "smaller"), ("above", "below"), ("before", "after"), ("earlier", "later"),
    ("maximum", "minimum"), ("max", "min"), ("positive", "negative"), ("profit", "loss"),
    ("enable", "disable"), ("include", "exclude"), ("allow", "prevent"), ("true", "false"),
    ("first", "last"), ("up", "down"), ("grow", "shrink"),
    ("open", "close"), ("accept", "reject"), ("success", "failure"), ("add", "remove"),
    ("inside", "outside"), ("always", "never"), ("all", "none"), ("must", "may"),
)


def _forms(word: str) -> set[str]:
    """Stems of a word's inflections ("increase" -> increase, increas)."""
    base = word[:-1] if word.endswith("e") else word
    return {stem(f) for f in (word, word + "s", word + "d", base + "ed", base + "ing", word + "es")}


# stem -> (pair, side) for every inflection of every direction word.
_SIDES: dict[str, set[tuple[int, int]]] = {}
for _index, _pair in enumerate(_OPPOSITE_PAIRS):
    for _side, _word in enumerate(_pair):
        for _form in _forms(_word):
            _SIDES.setdefault(_form, set()).add((_index, _side))


def _expand(text: str) -> str:
    text = normalize(text)
    for short, long in _IRREGULAR.items():
        text = text.replace(short, long)
    return _CONTRACTION.sub(lambda m: f"{m.group(1) if m.group(1) not in ('ca', 'wo') else ''} not", text)


def _words(text: str) -> list[str]:
    """Lower-case words with contractions spelled out; Han, kana and Hangul runs as `tokenize`
    splits them (character bigrams), so text in those scripts is compared too."""
    return tokenize(_expand(text))


def polarity_tokens(text: str) -> list[str]:
    """Lower-case stemmed tokens with contractions spelled out, negations and stopwords kept."""
    return [stem(t) for t in _words(text)]


def _negated_heads(tokens: list[str]) -> tuple[set[str], set[str]]:
    """(words governed by a negation, content words not governed by one). Each word is also
    recorded with its neighbouring content words ("pump>serviced", "possible<detect"), so
    that "the pump is not serviced" is compared with what the evidence says of the pump, not
    of another subject."""
    content: list[tuple[str, bool]] = []
    pending = 0
    for token in tokens:
        if token in NEGATIONS:
            pending = SCOPE
            continue
        if token in STOPWORDS or len(token) < 2:
            pending = max(pending - 1, 0)
            continue
        content.append((token, bool(pending)))
        pending = 0
    negated: set[str] = set()
    plain: set[str] = set()
    for i, (token, is_negated) in enumerate(content):
        keys = [token]
        if i > 0:
            keys.append(f"{content[i - 1][0]}>{token}")
        if i + 1 < len(content):
            keys.append(f"{token}<{content[i + 1][0]}")
        (negated if is_negated else plain).update(keys)
    return negated, plain


def _turned(one_negated: frozenset[str], one_plain: frozenset[str], other_negated: frozenset[str],
            other_plain: frozenset[str]) -> str | None:
    """A word negated on one side and plain on the other: with its preceding word when both
    sides name it that way, else only when each side uses the word one way."""
    for key in sorted(one_negated, key=lambda k: (k.isalnum(), k)):
        if key in other_negated or key not in other_plain:
            continue
        if ">" in key:
            return key.split(">")[1]
        if "<" in key:
            return key.split("<")[0]
        if key not in one_plain:
            return key
    return None


def _side_counts(tokens: list[str]) -> dict[tuple[int, int], int]:
    counts: dict[tuple[int, int], int] = {}
    for token in tokens:
        for side in _SIDES.get(token, ()):
            counts[side] = counts.get(side, 0) + 1
    return counts


@dataclass(frozen=True)
class PolarityConflict:
    word: str
    reason: str


@dataclass(frozen=True)
class PolarityReading:
    """What the polarity check reads of a text: its words, their stems, the words a negation
    governs and those it does not, and how often each side of each direction pair occurs."""

    words: tuple[str, ...]
    tokens: tuple[str, ...]
    negated: frozenset[str]
    plain: frozenset[str]
    sides: dict[tuple[int, int], int]


def polarity_reading(text: str) -> PolarityReading:
    """The negations and direction words of a text (not memoised: a page's windows keep theirs)."""
    words = tuple(_words(text))
    tokens = tuple(stem(w) for w in words)
    negated, plain = _negated_heads(list(tokens))
    return PolarityReading(words, tokens, frozenset(negated), frozenset(plain), _side_counts(list(tokens)))


@lru_cache(maxsize=8192)
def read_polarity(text: str) -> PolarityReading:
    """`polarity_reading`, memoised: a sentence checked against several windows is read once."""
    return polarity_reading(text)


def polarity_conflict(sentence: str, evidence: str) -> PolarityConflict | None:
    """The first way `sentence` turns `evidence` around, or None when their polarity agrees."""
    return conflict_between(read_polarity(sentence), read_polarity(evidence))


def conflict_between(s: PolarityReading, e: PolarityReading) -> PolarityConflict | None:
    """`polarity_conflict` on texts already read (a sentence's reading, a window's)."""
    s_words, e_words = s.words, e.words

    def surface(key: str) -> str:
        """The first spelling of a stem, for the reason."""
        return next((w for w in s_words + e_words if stem(w) == key), key)

    s_negated, s_plain, e_negated, e_plain = s.negated, s.plain, e.negated, e.plain
    added = _turned(s_negated, s_plain, e_negated, e_plain)
    if added:
        return PolarityConflict(added, f"the sentence negates '{surface(added)}', the source does not")
    removed = _turned(e_negated, e_plain, s_negated, s_plain)
    if removed:
        return PolarityConflict(removed, f"the source negates '{surface(removed)}', the sentence does not")
    s_sides, e_sides = s.sides, e.sides
    # A sentence uses a direction word more often than its evidence, and the opposite less
    # often: one occurrence was turned around.
    for (pair, side), count in sorted(s_sides.items()):
        opposite = (pair, 1 - side)
        if count > e_sides.get((pair, side), 0) and e_sides.get(opposite, 0) > s_sides.get(opposite, 0):
            word = next(w for w in s_words if (pair, side) in _SIDES.get(stem(w), ()))
            other = next(w for w in e_words if opposite in _SIDES.get(stem(w), ()))
            return PolarityConflict(word, f"the sentence says '{word}' where the source says '{other}'")
    return None
