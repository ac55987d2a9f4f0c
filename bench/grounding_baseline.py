"""The verifier's previous sentence score, kept as the baseline of `bench/verify.py`.

Five overlap signals against the best window of one to three `sentences_of` sentences, weighted
0.10 citation / 0.35 word F1 / 0.20 bigram F1 / 0.10 trigram F1 / 0.25 character 4-gram Dice,
grounded at 0.45. Frozen here so that "before" is measured on the same set as "after".
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from shared.text.lexical import sentences_of, terms
from shared.text.normalize import normalize

WEIGHTS = {"citation": 0.10, "word_f1": 0.35, "bigram_f1": 0.20, "trigram_f1": 0.10, "char_similarity": 0.25}
GROUNDED_AT = 0.45
SHORTLIST = 5


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _f1(a: Counter, b: Counter) -> float:
    common = sum((a & b).values()) if a and b else 0
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def _char_grams(text: str, n: int = 4) -> Counter[str]:
    text = normalize(text)
    return Counter(text[i : i + n] for i in range(max(len(text) - n + 1, 0)))


def _dice(a: Counter, b: Counter) -> float:
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0


@lru_cache(maxsize=512)
def _windows(source: str) -> tuple[tuple[str, list[str], Counter, frozenset], ...]:
    sentences = sentences_of(source) or (source,)
    tokenised = [terms(s) for s in sentences]
    out = []
    for start in range(len(sentences)):
        for width in range(1, 4):
            if start + width > len(sentences):
                break
            tokens = [t for toks in tokenised[start : start + width] for t in toks]
            out.append((" ".join(sentences[start : start + width]), tokens, Counter(tokens), frozenset(tokens)))
    return tuple(out)


def baseline_score(sentence: str, page: str) -> float:
    """The previous score of a cited sentence against its page."""
    tokens = terms(sentence)
    unigrams, vocabulary = Counter(tokens), frozenset(tokens)
    shortlist = sorted(_windows(page), key=lambda w: -len(vocabulary & w[3]) / (len(vocabulary) + len(w[3]) or 1))
    best, best_f1 = None, 0.0
    for window in shortlist[:SHORTLIST]:
        f1 = _f1(unigrams, window[2])
        if f1 > best_f1:
            best, best_f1 = window, f1
    values = {"citation": 1.0, "word_f1": best_f1, "bigram_f1": 0.0, "trigram_f1": 0.0, "char_similarity": 0.0}
    if best is not None:
        values["bigram_f1"] = _f1(_ngrams(tokens, 2), _ngrams(best[1], 2))
        values["trigram_f1"] = _f1(_ngrams(tokens, 3), _ngrams(best[1], 3))
        values["char_similarity"] = _dice(_char_grams(sentence), _char_grams(best[0]))
    return sum(WEIGHTS[k] * values[k] for k in WEIGHTS)
