"""A sentence that restates its page with one word replaced: the slot is found, named in the
reason, and weighed by how close the two words are."""

from __future__ import annotations

import numpy as np

from shared.text.grounding import UNSUPPORTED, default_fit, ground
from shared.text.substitution import WordVectors, least_similarity, same_word, substitutions

PAGE = ("Accounts receivable. Amounts billed and due from our customers under both contract types are "
        "classified as receivables on the balance sheet. Unbilled amounts are contract assets.")
TRUE = "Amounts billed and due from our customers under both contract types are classified as receivables."
SWAPPED = "Amounts billed and due from our customers under both contract types are classified as payables on the balance sheet."


class _TableEmbedder:
    """Unit vectors from a small table: two words count as synonyms, the rest are orthogonal."""

    name = "table-vectors"

    def __init__(self, synonyms: tuple[str, str]) -> None:
        self.synonyms = synonyms
        self.calls = 0
        self._axes: dict[str, int] = {}  # each other word its own axis, in order of first sight

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        for text in texts:
            if text not in self.synonyms:
                self._axes.setdefault(text, 1 + len(self._axes))
        assert len(self._axes) < 256, "the table has room for 255 distinct words"
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, 0 if text in self.synonyms else self._axes[text]] = 1.0
        return out


def test_one_replaced_word_between_aligned_neighbours_is_a_slot() -> None:
    slots = substitutions(SWAPPED, PAGE)
    assert [(s.said, s.source) for s in slots] == [(("payables",), ("receivables",))]


def test_verbatim_shortened_and_reworded_sentences_have_no_slot() -> None:
    assert substitutions(TRUE, PAGE) == []
    # Words added or dropped, function words changed, another form of the same word: no slot.
    assert substitutions("Amounts billed and due from customers are classified as receivables.", PAGE) == []
    assert substitutions("Amounts billed and due from our customers under either contract type are classified "
                         "as receivables.", PAGE) == []
    assert same_word("traded", "trades") and same_word("collect", "collectible")
    assert not same_word("included", "excluded") and not same_word("payables", "receivables")


def test_replaced_word_lowers_the_score_below_the_verbatim_sentence_and_is_named() -> None:
    fit = default_fit()
    true, swapped = ground(TRUE, PAGE, fit), ground(SWAPPED, PAGE, fit)
    assert true.supported and true.features["substituted"] == 0.0
    assert swapped.features["substituted"] == 1.0 and swapped.score < true.score
    assert swapped.verdict == UNSUPPORTED
    assert "'payables'" in swapped.reason and "'receivables'" in swapped.reason


def test_word_vectors_set_the_distance_of_a_slot_and_are_memoised() -> None:
    embedder = _TableEmbedder(("payables", "receivables"))
    vectors = WordVectors(embedder)
    close = least_similarity(substitutions(SWAPPED, PAGE), vectors)
    assert close > 0.99
    calls = embedder.calls
    vectors.vectors(["payables", "receivables"])
    assert embedder.calls == calls
    far = least_similarity(substitutions(SWAPPED, PAGE), WordVectors(_TableEmbedder(("a", "b"))))
    assert far < 0.01


def test_vectors_are_used_only_with_a_fit_made_for_them() -> None:
    vectors = WordVectors(_TableEmbedder(("payables", "receivables")))
    # The shipped fits know no "table-vectors": the lexical fit, distance 1 for any slot.
    result = ground(SWAPPED, PAGE, None, vectors)
    assert result.features["substitution_distance"] == 1.0
    fit = default_fit()
    made_for_them = type(fit)(fit.weights, fit.bias, fit.threshold, fit.contradiction_coverage, vectors.name)
    assert ground(SWAPPED, PAGE, made_for_them, vectors).features["substitution_distance"] < 0.01
