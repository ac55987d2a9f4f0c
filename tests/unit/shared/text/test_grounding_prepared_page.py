"""The prepared page's indexes give the verdicts of the plain definition.

`ground` compares a sentence with every window of a page at once through indexes built when the
page is prepared, and compares each window at most once. Here the plain definition, written as
directly as possible (every window's overlap from its own token counts, word pairs and character
4-grams; a window's core from a scan of every statement), is run beside it on the same sentences:
the windows, the features, the scores and the verdicts must be identical, not merely close.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench.grounding_set import generate
from shared.text.grounding import (
    FEATURES,
    FUNCTION_WEIGHT,
    NEAR_BEST,
    SHORTLIST,
    PageWindows,
    Window,
    _char_grams,
    _split_numbers,
    default_fit,
    ground,
    page_windows,
)
from shared.text.lexical import STOPWORDS
from shared.text.numbers import unstated
from shared.text.polarity import NEGATIONS, polarity_conflict

# Small documents of each collection: a table-heavy earnings release, a manual with code, prose.
SAMPLE_PDFS = ("pageindex/q1-fy25-earnings.pdf", "r-manuals/R-data.pdf", "pageindex/four-lectures.pdf",
               "financebench/FOOTLOCKER_2022_8K_dated-2022-05-20.pdf")


def _weight(token: str) -> float:
    return FUNCTION_WEIGHT if token in STOPWORDS and token not in NEGATIONS else 1.0


def _plain_overlap(sentence: str, window: Window) -> tuple[float, float, float]:
    tokens, numbers = _split_numbers(sentence)
    counts = Counter(tokens)
    total = sum(_weight(t) * n for t, n in counts.items()) + len(numbers) or 1.0
    held = sum(_weight(t) * min(n, window.tokens[t]) for t, n in counts.items() if t in window.vocabulary)
    held += len(numbers) - len(unstated(numbers, window.numbers))
    coverage = held / total
    pairs = list(zip(tokens, tokens[1:], strict=False))
    bigram = sum(p in window.bigrams for p in pairs) / len(pairs) if pairs else coverage
    grams = _char_grams(sentence)
    chars = len(grams & _char_grams(window.text)) / len(grams) if grams else 0.0
    return coverage, bigram, chars


def _plain_window(sentence: str, page: str) -> tuple[Window, tuple[float, float, float], bool, bool]:
    """The evidence window, its overlap and whether a quantity is missing or polarity turned,
    as the definition reads: a shortlist by shared vocabulary, the best coverage, the checks on
    the window's core and an alternative nearly as close that passes them."""
    windows = page_windows(page)
    tokens, quantities = _split_numbers(sentence)
    vocabulary = set(tokens)
    shortlist = sorted(windows, key=lambda w: (-len(vocabulary & w.vocabulary), w.end - w.start))[:SHORTLIST]
    measured = sorted(((_plain_overlap(sentence, w), w) for w in shortlist),
                      key=lambda item: (-item[0][0] - item[0][1], item[1].end - item[1].start))
    best_total = measured[0][0][0] + measured[0][0][1]

    def checks(candidate: Window) -> tuple[bool, bool]:
        core = [candidate] + [u for u in windows if u.width == 1 and candidate.width > 1
                              and candidate.start <= u.start and u.end <= candidate.end
                              and sum(_plain_overlap(sentence, u)[:2]) >= NEAR_BEST * best_total]
        return (any(unstated(quantities, c.numbers) for c in core),
                any(polarity_conflict(sentence, c.text) for c in core))

    overlap, window = measured[0]
    missing, turned = checks(window)
    if missing or turned:
        for other_overlap, other in measured[1:]:
            if other_overlap[0] + other_overlap[1] < NEAR_BEST * best_total:
                break
            if checks(other) == (False, False):
                return other, other_overlap, False, False
    return window, overlap, missing, turned


def _assert_same(sentence: str, page: str) -> None:
    result = ground(sentence, page)
    window, (coverage, bigram, chars), missing, turned = _plain_window(sentence, page)
    assert (result.start, result.end, result.window) == (window.start, window.end, window.text), sentence
    expected = {"coverage": round(coverage, 4), "bigram_coverage": round(bigram, 4),
                "char_coverage": round(chars, 4), "number_missing": float(missing),
                "polarity_conflict": float(turned)}
    assert {k: result.features[k] for k in expected} == expected, sentence
    fit = default_fit()
    assert result.score == round(fit.score(result.features), 4)
    assert set(result.features) == set(FEATURES)


PAGE = """Maintenance schedule
The feed pump is serviced every 12 weeks by crew A. Seals are replaced after 4,000 hours.
• Valve V-101 opens at 12 bar; valve V-102 never opens above 9 bar.
Table 3: Costs (in millions)  Parts 1,577  Labour 912
The quarterly report does not include the cooling towers, which are inspected monthly."""


@pytest.mark.parametrize("sentence", [
    "The feed pump is serviced every 12 weeks by crew A.",
    "The feed pump is serviced every 14 weeks by crew A.",
    "Seals are replaced before 4,000 hours.",
    "Valve V-101 opens at 9 bar.",
    "Valve V-103 opens at 12 bar.",
    "The quarterly report includes the cooling towers.",
    "Parts cost $1.6 billion.",
    "Crew A services the feed pump.",
    "The cooling towers are inspected every month, and the report leaves them out.",
    "Nothing on this page is about turbines.",
])
def test_the_indexes_give_the_plain_definitions_verdicts(sentence: str) -> None:
    _assert_same(sentence, PAGE)


def test_the_indexes_give_the_plain_definitions_verdicts_on_the_dev_documents(shared_data: Path,
                                                                              tmp_path: Path) -> None:
    for name in SAMPLE_PDFS:
        (tmp_path / Path(name).name).symlink_to(shared_data / "pdfs" / name)
    items = list(generate(tmp_path))
    assert len({i.kind for i in items}) >= 6 and len({i.page_text for i in items}) >= 10
    for item in items:
        _assert_same(item.sentence, item.page_text)


# Statements whose words are a character or two long, or none at all, in several scripts: the
# 4-grams across a join reach into the statements on either side.
SHORT_STATEMENTS = """Go. A b. — . x. 日本語のテキストです。 Über die ﬁne Café-Straße. é. ok.
Schritt 1: ab. 3. 2,5 %. Mañana ­sí. Ω. I/O. e.g. x y z."""


def test_a_windows_4_grams_from_its_statements_are_those_of_its_text(shared_data: Path, tmp_path: Path) -> None:
    for name in SAMPLE_PDFS:
        (tmp_path / Path(name).name).symlink_to(shared_data / "pdfs" / name)
    pages = [PAGE, SHORT_STATEMENTS, *dict.fromkeys(item.page_text for item in generate(tmp_path))]
    for page in pages:
        windows = PageWindows(page)
        assert len(windows) > 3
        for index, window in enumerate(windows):
            assert windows.grams(index) == _char_grams(window.text), window.text
