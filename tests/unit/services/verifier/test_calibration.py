"""The answer's confidence as the probability that it is right: fitted so that it tracks how often
answers are right, put in words, and applied to every answer the query path gives."""

from __future__ import annotations

import math
import random

import pytest

from services.verifier.calibration import (
    CALIBRATION_FEATURES,
    CHECK,
    LIKELY,
    UNLIKELY,
    CalibrationModel,
    calibrated,
)
from services.verifier.models import VerifierModels
from shared.model.query import QuerySettings, VerifiedAnswer
from tests.support.navigation import configured as navigator_models
from tests.support.query.documents import plant_manual
from tests.support.query.indexes import build
from treerag.evaluation.calibration import (
    Labelled,
    fit_calibration,
    held_out_report,
    is_right,
    reliability,
)
from treerag.evaluation.crossval import Outcome
from treerag.pipeline import answer_from_indexes
from treerag.query_path import QueryModels


def test_the_calibration_error_is_the_weighted_gap_between_confidence_and_share_right() -> None:
    # Bin [0.2, 0.3): 0.25 said, 1 of 2 right; bin [0.9, 1.0]: 0.95 said, 2 of 2 right.
    found = reliability([0.25, 0.25, 0.95, 0.95], [True, False, True, True])
    assert found.ece == pytest.approx(0.5 * abs(0.25 - 0.5) + 0.5 * abs(0.95 - 1.0))
    assert [(b.lower, b.answers, b.share_right) for b in found.bins] == [(0.2, 2, 0.5), (0.9, 2, 1.0)]
    assert found.likely_right == 2 and found.likely_right_share_right == 1.0


def _answers(collection: str, n: int, seed: int) -> list[Labelled]:
    """Answers whose chance of being right rises with their grounding, alike in every collection."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        signals = [rng.random() for _ in CALIBRATION_FEATURES]
        p = 1.0 / (1.0 + math.exp(-(6.0 * signals[0] - 3.0)))
        out.append(Labelled(collection=collection, signals=signals, right=rng.random() < p))
    return out


def test_a_fitted_calibration_tracks_how_often_unseen_answers_are_right() -> None:
    model = fit_calibration(_answers("a", 600, 1) + _answers("b", 600, 2))
    unseen = _answers("c", 2000, 3)
    probabilities = [model.probability(dict(zip(CALIBRATION_FEATURES, e.signals, strict=True))) for e in unseen]
    assert reliability(probabilities, [e.right for e in unseen]).ece < 0.05
    low, high = (model.probability({"grounding": g}) for g in (0.1, 0.9))
    assert low < 0.2 < 0.8 < high


def _outcome(collection: str, right: bool, grounding: float, **fields: object) -> Outcome:
    base = dict(system="treerag-auto", item_id=f"{collection}-{grounding}-{right}", collection=collection,
                type="t", fold=0, answerable=True, abstained=False, ranked=[("a.pdf", 3)], context=[("a.pdf", 3)],
                cited=[("a.pdf", 3)], gold=[("a.pdf", 3)], context_tokens=10, latency_ms=1.0,
                answer="The pump is serviced by the plant's own crew." if right else "The valve is red.",
                gold_answer="the plant's own crew", signals={"grounding": grounding})
    return Outcome(**(base | fields))


def test_answers_are_labelled_right_by_the_gold_answer_and_the_cited_page() -> None:
    assert is_right(_outcome("r", True, 0.9))
    assert not is_right(_outcome("r", False, 0.9))
    # The same words cited on another page do not count: the page is half the answer.
    assert not is_right(_outcome("r", True, 0.9, cited=[("a.pdf", 7)]))
    # A figure is right wherever it was read.
    assert is_right(_outcome("f", True, 0.9, answer="Capital expenditure was $1,577 million.",
                             gold_answer="$1577.00", cited=[("a.pdf", 7)]))


def test_the_held_out_report_fits_without_the_collection_it_judges() -> None:
    outcomes = [_outcome(name, right, g) for name in ("m", "r") for g, right in
                [(0.1, False), (0.2, False), (0.3, True), (0.7, False), (0.8, True), (0.9, True)] * 5]
    outcomes.append(_outcome("m", False, 0.9, answerable=False, off_topic=True, item_id="neg"))
    report = held_out_report(outcomes)
    assert set(report.held_out) == {"m", "r", "pooled"}
    assert report.held_out["pooled"].answers == 60 and report.negative_pairs_answered == 1


MODEL = CalibrationModel(features=list(CALIBRATION_FEATURES), coef=[4.0, 0.0, 0.0, 0.0, 0.0], intercept=-2.0)


@pytest.mark.parametrize(("grounding", "words"), [(0.95, LIKELY), (0.5, CHECK), (0.05, UNLIKELY)])
def test_the_confidence_is_said_in_words_that_match_it(grounding: float, words: str) -> None:
    answer = VerifiedAnswer(question="How often is the pump serviced?", answer="Every 400 hours.",
                            confidence=grounding)
    made = calibrated(answer, 0.7, MODEL)
    assert made.confidence == pytest.approx(MODEL.probability({"grounding": grounding}), abs=1e-4)
    assert made.assessment == words and made.signals["answer_probability"] == 0.7


def test_a_refusal_or_another_generator_keeps_its_confidence() -> None:
    refusal = VerifiedAnswer(question="q", answer="Not found in the documents.", abstained=True)
    assert calibrated(refusal, 0.1, MODEL) == refusal
    other = VerifiedAnswer(question="q", answer="Every 400 hours.", confidence=0.9, generator="llm:small")
    made = calibrated(other, 0.7, MODEL)
    assert made.confidence == 0.9 and made.assessment == "" and made.signals["grounding"] == 0.9


def test_every_answer_of_the_query_path_is_calibrated() -> None:
    doc = plant_manual()
    models = QueryModels(navigator=navigator_models(), verifier=VerifierModels(calibration=MODEL))
    result = answer_from_indexes("How often is the pump serviced?", [build(doc)], QuerySettings(), models=models)
    answer = result.answer
    assert not answer.abstained and answer.assessment in {LIKELY, CHECK, UNLIKELY}
    assert answer.confidence == pytest.approx(MODEL.probability(answer.signals), abs=1e-4)


def test_the_by_document_report_fits_without_the_document_it_judges() -> None:
    # Each document's answers say the opposite of the other's: a calibration that had seen the
    # document it judges would put its right answers high; one fitted without it puts them low.
    outcomes = [_outcome("m", right, g, gold=[(doc, 3)], cited=[(doc, 3)], item_id=f"{doc}-{g}-{k}")
                for doc, flip in (("a.pdf", False), ("b.pdf", True)) for k in range(5)
                for g, right in [(0.1, flip), (0.2, flip), (0.8, not flip), (0.9, not flip)]]
    outcomes += [_outcome("r", right, g, item_id=f"r-{g}-{right}") for g, right in [(0.2, False), (0.8, True)]]
    report = held_out_report(outcomes)
    assert report.by_document is not None and report.by_document.answers == 42
    # Held out, the answers of both documents are ranked backwards: no bin's mean confidence
    # agrees with its share right, as it would if the fit had seen them.
    assert report.by_document.ece > 0.3


def test_the_by_document_report_needs_two_documents() -> None:
    outcomes = [_outcome(name, right, g) for name in ("m", "r") for g, right in [(0.2, False), (0.8, True)] * 3]
    assert held_out_report(outcomes).by_document is None
