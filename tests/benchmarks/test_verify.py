"""The verifier's benchmark: folds never split a document, AUROC and the fit behave as defined,
and the set's perturbations change what they claim to change."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from bench.grounding_set import HANDWRITTEN, Item, change_number, flip_negation, handwritten, paraphrase
from bench.verify import auroc, fit, fit_signed, folds_by_document
from shared.text.grounding import FEATURES


def _items(docs: int, per_doc: int) -> list[Item]:
    return [Item(f"doc{d}.pdf", 1, f"s{k}", "page", "verbatim", True) for d in range(docs) for k in range(per_doc)]


def test_folds_hold_whole_documents() -> None:
    items = _items(docs=12, per_doc=4)
    folds = folds_by_document(items)
    by_doc: dict[str, set[int]] = {}
    for item, fold in zip(items, folds, strict=True):
        by_doc.setdefault(item.doc, set()).add(fold)
    assert all(len(f) == 1 for f in by_doc.values())
    assert len(set(folds)) == 5


def test_auroc_counts_ties_as_half() -> None:
    labels = np.array([True, True, False, False])
    assert auroc(np.array([0.9, 0.8, 0.2, 0.1]), labels) == 1.0
    assert auroc(np.array([0.1, 0.2, 0.8, 0.9]), labels) == 0.0
    assert auroc(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.5


def test_fit_separates_covered_from_vetoed_sentences() -> None:
    rng = np.random.default_rng(0)
    n = 200
    x = np.zeros((n, len(FEATURES)))
    labels = np.arange(n) % 2 == 0
    x[:, FEATURES.index("coverage")] = np.where(labels, 0.9, 0.85) + rng.normal(0, 0.03, n)
    x[:, FEATURES.index("bigram_coverage")] = x[:, FEATURES.index("coverage")]
    x[~labels, FEATURES.index("number_missing")] = 1.0
    kinds = np.where(labels, "verbatim", "number")
    fitted = fit(x, labels, kinds, None)
    assert fitted.weights["number_missing"] < 0
    supported = dict(zip(FEATURES, x[0], strict=True))
    assert fitted.score(supported) >= fitted.threshold


def test_perturbations_change_what_they_claim() -> None:
    rng = random.Random(3)
    sentence = "The committee does not approve budgets above 250 dollars before the annual review."
    assert flip_negation(sentence) == "The committee does approve budgets above 250 dollars before the annual review."
    changed = change_number(sentence, rng)
    assert changed is not None and changed != sentence and "250" not in changed
    assert paraphrase(sentence, random.Random(5)) != sentence


def test_signed_fit_never_rewards_a_missing_check_or_penalises_coverage() -> None:
    rng = np.random.default_rng(1)
    n = 400
    x = np.zeros((n, len(FEATURES)))
    labels = rng.random(n) < 0.5
    coverage = np.where(labels, 0.9, 0.6) + rng.normal(0, 0.05, n)
    x[:, FEATURES.index("coverage")] = coverage
    # A near copy of coverage that, alone, would take a negative weight.
    x[:, FEATURES.index("bigram_coverage")] = coverage - np.where(labels, 0.1, 0.0)
    weights, _ = fit_signed(x, labels.astype(float))
    named = dict(zip(FEATURES, weights, strict=True))
    assert named["coverage"] > 0 and named["bigram_coverage"] >= 0


def test_handwritten_set_is_well_formed() -> None:
    rows = [json.loads(line) for line in HANDWRITTEN.read_text().splitlines()]
    paraphrases = [r for r in rows if r["kind"] == "paraphrase"]
    assert len(paraphrases) >= 50
    assert {r["kind"] for r in rows} == {"paraphrase", "changed"}
    for row in rows:
        assert row["supported"] == (row["kind"] == "paraphrase")
        assert row["sentence"] != row["original"] and row["page"] >= 1 and row["doc"].endswith(".pdf")
    assert len({r["doc"] for r in paraphrases}) >= 20  # folds by document need many documents


def test_handwritten_originals_are_on_their_pages(shared_data: Path) -> None:
    items = list(handwritten(shared_data / "pdfs"))
    assert len(items) == len(HANDWRITTEN.read_text().splitlines())
    assert {i.kind for i in items} == {"hand_paraphrase", "hand_changed"}
