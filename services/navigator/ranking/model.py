"""The fitted ranking and abstention model: two logistic regressions over named features,
stored as a small versioned JSON file (`model.json`, written by `bench/fit_ranker.py`)."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, model_validator

MODEL_PATH = Path(__file__).with_name("model.json")
# The same recipe with the dense features at zero: used when embeddings are off.
LEXICAL_MODEL_PATH = Path(__file__).with_name("model-lexical.json")


class LinearModel(BaseModel):
    """A standardised linear score: ((x - mean) / scale) · coef + intercept."""

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float

    @model_validator(mode="after")
    def _same_lengths(self) -> LinearModel:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ValueError(f"model has {n} features but mean/scale/coef of other lengths; refit it")
        return self

    def decision(self, matrix: np.ndarray) -> np.ndarray:
        if matrix.size == 0:
            return np.zeros(matrix.shape[0])
        z = (matrix - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef) + self.intercept

    def probability(self, matrix: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.decision(matrix)))


class RankingModel(BaseModel):
    version: int = 1
    ranker: LinearModel
    abstention: LinearModel
    # The documents are taken to answer when the abstention model's probability reaches this.
    answer_threshold: float
    # How the model was fitted (data, folds, settings), for the record.
    fitted_on: dict[str, str | int | float] = {}

    def digest(self) -> str:
        """Hash of the model's canonical JSON: results name the exact model they used."""
        text = json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def to_json(self) -> str:
        return json.dumps(self.model_dump(), indent=1, sort_keys=True) + "\n"


class ModelFileError(RuntimeError):
    pass


def shipped_model() -> RankingModel:
    """The model for this process's embedder: the dense one when it was fitted with the same
    embedder, else the lexical one."""
    from services.navigator.ranking.dense import embedder_name  # loads the embedder only when asked

    model = load_model(MODEL_PATH)
    name = embedder_name()
    return model if name is not None and model.fitted_on.get("embeddings") == name else load_model(LEXICAL_MODEL_PATH)


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> RankingModel:
    """A model file (cached)."""
    try:
        return RankingModel.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFileError(
            f"cannot read the ranking model {path}: {exc}; regenerate it with `python -m bench.fit_ranker`"
        ) from exc
