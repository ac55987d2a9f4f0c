"""Hallucination detector: five signals per answer sentence against the source it cites.

Signals (each 0..1): citation presence, word-overlap F1, bigram F1, trigram F1, and character
4-gram similarity (Dice). The overlaps are measured against the best-matching window of one to
three consecutive source sentences, so a sentence is compared with what it paraphrases, not
with a whole page. Citation presence alone never grounds a sentence: its weight is below the
grounding bar. Word and n-gram overlaps are over content terms (function words dropped, light
stemming), so a faithful paraphrase ("the valves open at 12 bar") still matches its source.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from shared.model.query import SentenceCheck
from shared.text.lexical import sentences_of, terms
from shared.text.normalize import normalize

SIGNAL_WEIGHTS = {
    "citation": 0.10,
    "word_f1": 0.35,
    "bigram_f1": 0.20,
    "trigram_f1": 0.10,
    "char_similarity": 0.25,
}
GROUNDED_AT = 0.45  # far above the citation weight: overlap is required to ground a sentence
LOW_CONFIDENCE = 0.6
WEAK_SHARE = 0.7
ABSTENTION = "Not found in the documents."
MAX_WINDOW = 3
SHORTLIST = 5


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _f1(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    common = sum((a & b).values())
    if common == 0:
        return 0.0
    precision = common / sum(a.values())
    recall = common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def _char_grams(text: str, n: int = 4) -> Counter[str]:
    text = normalize(text)
    return Counter(text[i : i + n] for i in range(max(len(text) - n + 1, 0)))


def _dice(a: Counter, b: Counter) -> float:
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0


@dataclass
class _Window:
    text: str
    unigrams: Counter
    tokens: list[str]
    vocabulary: frozenset[str]


@lru_cache(maxsize=512)
def _cached_windows(source: str) -> tuple[_Window, ...]:
    return tuple(_build_windows(source))


def source_windows(source: str) -> list[_Window]:
    """Windows of one to three consecutive sentences of the source text (memoised)."""
    return list(_cached_windows(source))


def _build_windows(source: str) -> list[_Window]:
    """Windows of one to three consecutive sentences of the source text."""
    sentences = sentences_of(source) or [source]
    tokenised = [terms(s) for s in sentences]
    windows = []
    for start in range(len(sentences)):
        for width in range(1, MAX_WINDOW + 1):
            if start + width > len(sentences):
                break
            tokens = [t for toks in tokenised[start : start + width] for t in toks]
            windows.append(
                _Window(" ".join(sentences[start : start + width]), Counter(tokens), tokens, frozenset(tokens))
            )
    return windows


def signals(sentence: str, cited: bool, windows: list[_Window]) -> dict[str, float]:
    tokens = terms(sentence)
    unigrams = Counter(tokens)
    best: _Window | None = None
    best_f1 = 0.0
    # Shortlist windows by set overlap (cheap), then score the few best with counts.
    vocabulary = frozenset(tokens)
    shortlist = sorted(
        windows, key=lambda w: -len(vocabulary & w.vocabulary) / (len(vocabulary) + len(w.vocabulary) or 1)
    )[:SHORTLIST]
    for window in shortlist:
        f1 = _f1(unigrams, window.unigrams)
        if f1 > best_f1:
            best, best_f1 = window, f1
    if best is None:
        return {"citation": float(cited), "word_f1": 0.0, "bigram_f1": 0.0, "trigram_f1": 0.0, "char_similarity": 0.0}
    return {
        "citation": float(cited),
        "word_f1": round(best_f1, 4),
        "bigram_f1": round(_f1(_ngrams(tokens, 2), _ngrams(best.tokens, 2)), 4),
        "trigram_f1": round(_f1(_ngrams(tokens, 3), _ngrams(best.tokens, 3)), 4),
        "char_similarity": round(_dice(_char_grams(sentence), _char_grams(best.text)), 4),
    }


def sentence_score(values: dict[str, float]) -> float:
    return round(sum(SIGNAL_WEIGHTS[name] * values[name] for name in SIGNAL_WEIGHTS), 4)


def check_sentence(sentence: str, citation, windows: list[_Window]) -> SentenceCheck:  # noqa: ANN001
    values = signals(sentence, citation is not None, windows)
    score = sentence_score(values)
    return SentenceCheck(text=sentence, citation=citation, signals=values, score=score, grounded=score >= GROUNDED_AT)


def overall(checks: list[SentenceCheck]) -> tuple[float, list[str]]:
    """Confidence (mean sentence score) and the detector's warnings."""
    if not checks:
        return 0.0, []
    confidence = sum(c.score for c in checks) / len(checks)
    warnings = []
    if confidence < LOW_CONFIDENCE:
        warnings.append(f"low confidence {confidence:.2f} (< {LOW_CONFIDENCE}): check the cited pages")
    weak = sum(not c.grounded for c in checks)
    if weak / len(checks) > WEAK_SHARE:
        warnings.append(f"{weak} of {len(checks)} sentences are weakly grounded in their cited pages")
    return round(confidence, 4), warnings
