"""The models that check a verifier's answers, loaded once by whoever composes the stage.

The stage's bootstrap, the one-process engine and the evaluation harness hand the same bundle
to `VerifierHandlers`, so an answer is checked alike wherever it is asked: the entailment
judge (`TREERAG_NLI`, off by default), the word vectors of the configured embedder, which
select the grounding fit made for them (`shared/text/grounding_fit.json`), and the calibration
that makes the confidence a probability of being right (`calibration.json`).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.verifier.calibration import CalibrationModel, load_calibration
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.nli import configured_judge
from shared.ports.model_roles import EntailmentJudge
from shared.settings import Settings
from shared.text.substitution import WordVectors


@dataclass(frozen=True)
class VerifierModels:
    judge: EntailmentJudge | None = None
    word_vectors: WordVectors | None = None
    # Turns an answer's signals into the probability that it is right (`calibration.py`).
    calibration: CalibrationModel | None = None


def configured_models(settings: Settings) -> VerifierModels:
    return VerifierModels(judge=configured_judge(settings.nli), word_vectors=word_vectors(settings),
                          calibration=load_calibration())
