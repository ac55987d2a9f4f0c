"""The verifier's calibration: fitted on dev answers labelled right or wrong, and how well the
confidence tracks correctness when each collection is held out in turn.

An answer is *right* when it states the gold value (a figure question), or when its first
citation is a gold page and it holds the gold answer (`AnswerScore.holds`). Only answers to
answerable questions are labelled; answers given to questions the documents cannot answer
(off-topic, missing-name and evidence-removed pairs) are wrong by construction, and their mean
held-out confidence is reported beside.

The report: expected calibration error (ECE, over `BINS` equal-width bins of confidence), a
reliability table (answers, mean confidence and share right per bin), and how many answers the
words "likely right" would be given and how many of those are right. The same again with each
document's answers held out in turn, the folds second to the collections': a collection held
out meets answers of a kind no training answer had, a document held out mostly does not.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel
from sklearn.linear_model import LogisticRegression

from services.verifier.calibration import CALIBRATION_FEATURES, LIKELY_RIGHT, CalibrationModel
from treerag.evaluation.answer_scores import score_answer
from treerag.evaluation.crossval import Outcome

BINS = 10
# The logistic fit's inverse regularisation on standardised signals: a few hundred answers, five
# signals; the default strength of the library, not tuned.
STRENGTH = 1.0
SYSTEM = "treerag-auto"
GROUNDING = CALIBRATION_FEATURES.index("grounding")


class Labelled(BaseModel):
    collection: str
    signals: list[float]
    right: bool
    document: str = ""  # the file its gold pages are in: the unit of the by-document folds


class ReliabilityBin(BaseModel):
    lower: float
    upper: float
    answers: int
    mean_confidence: float
    share_right: float


class Reliability(BaseModel):
    answers: int
    right: int
    ece: float
    bins: list[ReliabilityBin]
    likely_right: int  # answers at or above LIKELY_RIGHT
    likely_right_share_right: float | None


class CalibrationReport(BaseModel):
    features: list[str]
    held_out: dict[str, Reliability]  # per held-out collection, and pooled
    # Each answer given a calibration fitted without its document's answers (the folds second to
    # the collections'); None with answers from one document only.
    by_document: Reliability | None = None
    support_score: Reliability  # the verifier's support score read as a probability, the same answers
    negative_pairs_answered: int
    negative_pairs_mean_confidence: float | None  # held out


def is_right(outcome: Outcome) -> bool:
    score = score_answer(outcome.answer, outcome.gold_answer, outcome.question)
    if score.figure:
        return score.right
    return bool(outcome.cited) and outcome.cited[0] in set(outcome.gold) and score.holds()


def signal_row(signals: dict[str, float]) -> list[float]:
    return [float(signals.get(name, 0.0)) for name in CALIBRATION_FEATURES]


def labelled_answers(outcomes: Sequence[Outcome], system: str = SYSTEM) -> list[Labelled]:
    """The answered answerable questions of `system`, with their signals and label."""
    return [
        Labelled(collection=o.collection, signals=signal_row(o.signals), right=is_right(o),
                 document=o.gold[0][0] if o.gold else o.item_id)
        for o in outcomes
        if o.system == system and o.answerable and not o.abstained and not o.negative_pair and o.signals
    ]


def fit_calibration(examples: Sequence[Labelled], fitted_on: dict[str, object] | None = None) -> CalibrationModel:
    """A logistic model of P(right | signals), its coefficients on the raw signals."""
    x = np.array([e.signals for e in examples], dtype=np.float64)
    y = np.array([e.right for e in examples], dtype=np.int64)
    if len(set(y.tolist())) < 2:
        raise ValueError("the calibration needs right and wrong answers to fit; evaluate more questions")
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    classifier = LogisticRegression(C=STRENGTH, max_iter=5000).fit((x - mean) / scale, y)
    coef = classifier.coef_[0] / scale
    intercept = float(classifier.intercept_[0] - (classifier.coef_[0] * mean / scale).sum())
    return CalibrationModel(
        features=list(CALIBRATION_FEATURES), coef=[round(float(c), 6) for c in coef], intercept=round(intercept, 6),
        fitted_on=dict(fitted_on or {}) | {"answers": len(examples), "right": int(y.sum())},
    )


def reliability(probabilities: Sequence[float], right: Sequence[bool], bins: int = BINS) -> Reliability:
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(right, dtype=np.float64)
    rows, ece = [], 0.0
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    for b in range(bins):
        inside = which == b
        if not inside.any():
            continue
        mean_p, share = float(p[inside].mean()), float(y[inside].mean())
        ece += inside.sum() / len(p) * abs(mean_p - share)
        rows.append(ReliabilityBin(lower=round(float(edges[b]), 2), upper=round(float(edges[b + 1]), 2),
                                   answers=int(inside.sum()), mean_confidence=round(mean_p, 4),
                                   share_right=round(share, 4)))
    likely = p >= LIKELY_RIGHT
    return Reliability(
        answers=len(p), right=int(y.sum()), ece=round(float(ece), 4), bins=rows, likely_right=int(likely.sum()),
        likely_right_share_right=round(float(y[likely].mean()), 4) if likely.any() else None,
    )


def _probability(model: CalibrationModel, example: Labelled) -> float:
    return model.probability(dict(zip(CALIBRATION_FEATURES, example.signals, strict=True)))


def by_document(examples: Sequence[Labelled]) -> Reliability | None:
    """Each answer given the probability of a calibration fitted on the other documents' answers;
    None when some document's absence leaves answers of one label only."""
    documents = sorted({e.document for e in examples})
    if len(documents) < 2 or any(len({e.right for e in examples if e.document != d}) < 2 for d in documents):
        return None
    probability: dict[int, float] = {}
    for document in documents:
        model = fit_calibration([e for e in examples if e.document != document])
        probability |= {i: _probability(model, e) for i, e in enumerate(examples) if e.document == document}
    return reliability([probability[i] for i in range(len(examples))], [e.right for e in examples])


def held_out_report(outcomes: Sequence[Outcome], system: str = SYSTEM) -> CalibrationReport:
    """Each collection's answers given the probabilities of a calibration fitted on the others."""
    examples = labelled_answers(outcomes, system)
    collections = sorted({e.collection for e in examples})
    if len(collections) < 2:
        raise ValueError("holding a collection out needs answers from at least two collections")
    models = {name: fit_calibration([e for e in examples if e.collection != name]) for name in collections}
    probability = [_probability(models[e.collection], e) for e in examples]
    held_out = {name: reliability([p for p, e in zip(probability, examples, strict=True) if e.collection == name],
                                  [e.right for e in examples if e.collection == name]) for name in collections}
    held_out["pooled"] = reliability(probability, [e.right for e in examples])
    negatives = [o for o in outcomes if o.system == system and o.negative_pair and not o.abstained and o.signals]
    negative_p = [models[o.collection].probability(o.signals) for o in negatives if o.collection in models]
    return CalibrationReport(
        features=list(CALIBRATION_FEATURES), held_out=held_out, by_document=by_document(examples),
        support_score=reliability([min(max(e.signals[GROUNDING], 0.0), 1.0) for e in examples],
                                  [e.right for e in examples]),
        negative_pairs_answered=len(negative_p),
        negative_pairs_mean_confidence=round(statistics.fmean(negative_p), 4) if negative_p else None,
    )
