"""The answer's confidence as the probability that it is right, and that probability in words.

The verifier's checks say how much of an answer its cited pages support; that is not how likely
the answer is to be right (a sentence can be supported and still not answer). A logistic model
over a few signals that mean the same in every collection turns them into a probability:

| signal | what it measures |
|---|---|
| grounding | the verifier's support score of the answer (sentence checks, times the question's coverage) |
| supported | share of the answer's sentences its cited pages support |
| coverage | share of the question's terms the answer's text holds |
| answer_probability | the navigator's probability that the documents answer the question |
| figure | 1 when the answer leads with a figure read from a table row |

It is fitted on dev answers labelled right or wrong, each collection held out in turn for the
reported calibration (`python -m bench.fit_calibration`, `treerag/evaluation/calibration.py`),
and shipped as `calibration.json` for the generator it was fitted on (the extractive answerer):
another generator's answers keep the support score, with no words attached.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from shared.model.query import VerifiedAnswer
from shared.text.citations import strip_citations
from shared.text.lexical import query_terms, terms

CALIBRATION_FEATURES = ("grounding", "supported", "coverage", "answer_probability", "figure")
# The words of a calibrated probability: "likely right" promises that at least this share of
# such answers is right, "probably not answered" that at most PROBABLY_NOT is.
LIKELY_RIGHT = 0.8
PROBABLY_NOT = 0.2
LIKELY, CHECK, UNLIKELY = "likely right", "check the page", "probably not answered"
# When the navigator gives no probability (no fitted ranking model), its neutral value.
NO_PROBABILITY = 0.5
SHIPPED = Path(__file__).with_name("calibration.json")


class CalibrationModel(BaseModel):
    features: list[str]
    coef: list[float]
    intercept: float
    generator: str = Field(default="extractive", description="The answerer whose answers it was fitted on.")
    fitted_on: dict[str, Any] = Field(default_factory=dict)

    def probability(self, signals: dict[str, float]) -> float:
        z = self.intercept + sum(c * signals.get(f, 0.0) for f, c in zip(self.features, self.coef, strict=True))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


def load_calibration(path: Path = SHIPPED) -> CalibrationModel | None:
    """The shipped calibration; None when there is none (confidences stay support scores)."""
    if not path.is_file():
        return None
    return CalibrationModel.model_validate_json(path.read_text())


def answer_signals(answer: VerifiedAnswer, answer_probability: float | None) -> dict[str, float]:
    """The calibration's inputs for one answer (`answer.signals` may already hold some)."""
    checks = answer.sentences
    asked = query_terms(answer.question)
    said = set(terms(strip_citations(answer.answer)))
    return {
        "grounding": answer.signals.get("grounding", answer.confidence),
        "supported": sum(c.verdict == "supported" for c in checks) / len(checks) if checks else 0.0,
        "coverage": sum(t in said for t in asked) / len(asked) if asked else 0.0,
        "answer_probability": NO_PROBABILITY if answer_probability is None else float(answer_probability),
        "figure": answer.signals.get("figure", 0.0),
    }


def assessment(probability: float) -> str:
    if probability >= LIKELY_RIGHT:
        return LIKELY
    return UNLIKELY if probability < PROBABLY_NOT else CHECK


def calibrated(answer: VerifiedAnswer, answer_probability: float | None,
               model: CalibrationModel | None) -> VerifiedAnswer:
    """`answer` with its signals recorded and, when `model` was fitted for its generator, its
    confidence the probability that it is right, with the words for it."""
    if answer.abstained:
        return answer
    signals = answer_signals(answer, answer_probability)
    if model is None or model.generator != answer.generator:
        return answer.model_copy(update={"signals": signals})
    probability = round(model.probability(signals), 4)
    return answer.model_copy(update={"signals": signals, "confidence": probability,
                                     "assessment": assessment(probability)})
