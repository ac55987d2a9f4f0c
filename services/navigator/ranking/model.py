"""The fitted ranking and abstention model, stored as a small versioned JSON file (`model.json`,
written by `bench/fit_ranker.py`): a page ranker (a linear score, `kind` "logistic", or an
ensemble of regression trees, `kind` "trees") and a logistic abstention model over named
features. Scoring needs numpy only; the fitting library is not imported at run time."""

from __future__ import annotations

import hashlib
import json
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, Discriminator, Field, Tag, model_validator

MODEL_PATH = Path(__file__).with_name("model.json")
# The same recipe fitted with another embedder's vectors: BAAI's bge-small-en-v1.5 (int8 ONNX,
# `scripts/models/bge-small.sh`), loaded by the fastembed backend from its folder.
BGE_MODEL_PATH = Path(__file__).with_name("model-bge-small.json")
# Models with dense features, each used when this process's embedder is the one it was fitted with.
DENSE_MODEL_PATHS = (MODEL_PATH, BGE_MODEL_PATH)
# The same recipe with the dense features at zero: used when embeddings are off, or with an
# embedder no model was fitted with.
LEXICAL_MODEL_PATH = Path(__file__).with_name("model-lexical.json")


class LinearModel(BaseModel):
    """A standardised linear score: ((x - mean) / scale) · coef + intercept."""

    # Not written to the file: files without `kind` hold a linear ranker, so a linear model's
    # file and hash stay what they were before tree rankers existed.
    kind: Literal["logistic"] = Field("logistic", exclude=True)
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

    def used_features(self) -> set[str]:
        return {name for name, c in zip(self.features, self.coef, strict=True) if c != 0.0}


class Tree(BaseModel):
    """One regression tree as parallel node arrays (node 0 is the root). At an inner node a row
    goes left when its feature is <= threshold, or, when the value is missing (NaN), when
    `missing_left`; a leaf (left == -1) adds its value to the score."""

    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    missing_left: list[bool]
    value: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> Tree:
        n = len(self.feature)
        if not n or not (len(self.threshold) == len(self.left) == len(self.right) == len(self.missing_left)
                         == len(self.value) == n):
            raise ValueError("a tree's node arrays are empty or of different lengths; refit the model")
        for k in range(n):
            leaf = self.left[k] == -1
            if leaf != (self.right[k] == -1) or (not leaf and not (k < self.left[k] < n and k < self.right[k] < n)):
                raise ValueError(f"tree node {k} has children outside the tree; refit the model")
        return self

    def depth(self) -> int:
        def below(k: int) -> int:
            return 0 if self.left[k] == -1 else 1 + max(below(self.left[k]), below(self.right[k]))

        return below(0)


class TreeEnsemble(BaseModel):
    """A boosted tree score: baseline + the sum of every tree's leaf value, added tree by tree in
    order (the fitting library's own order of summation, so scores match it exactly)."""

    kind: Literal["trees"] = "trees"
    features: list[str]
    baseline: float
    trees: list[Tree]

    @model_validator(mode="after")
    def _features_in_range(self) -> TreeEnsemble:
        n = len(self.features)
        for tree in self.trees:
            if any(not 0 <= f < n for f, left in zip(tree.feature, tree.left, strict=True) if left != -1):
                raise ValueError(f"a tree splits on a feature outside the model's {n} features; refit it")
        return self

    @cached_property
    def _packed(self) -> tuple[np.ndarray, ...]:
        """Every tree's nodes in padded (trees x nodes) arrays; a leaf points at itself, so a
        fixed number of steps down reaches every leaf."""
        width = max((len(t.feature) for t in self.trees), default=1)
        shape = (len(self.trees), width)
        feature, left, right = np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64)
        threshold, value = np.zeros(shape), np.zeros(shape)
        missing_left = np.zeros(shape, bool)
        for t, tree in enumerate(self.trees):
            n = len(tree.feature)
            nodes = np.arange(n)
            leaf = np.asarray(tree.left) == -1
            feature[t, :n] = np.where(leaf, 0, tree.feature)
            threshold[t, :n] = tree.threshold
            left[t, :n] = np.where(leaf, nodes, tree.left)
            right[t, :n] = np.where(leaf, nodes, tree.right)
            missing_left[t, :n] = tree.missing_left
            value[t, :n] = tree.value
        steps = max((t.depth() for t in self.trees), default=0)
        return feature, threshold, left, right, missing_left, value, np.array(steps)

    def decision(self, matrix: np.ndarray) -> np.ndarray:
        if matrix.size == 0 or not self.trees:
            return np.full(matrix.shape[0], self.baseline)
        feature, threshold, left, right, missing_left, value, steps = self._packed
        rows = np.arange(matrix.shape[0])[:, None]
        trees = np.arange(len(self.trees))[None, :]
        node = np.zeros((matrix.shape[0], len(self.trees)), np.int64)
        for _ in range(int(steps)):
            x = matrix[rows, feature[trees, node]]
            go_left = np.where(np.isnan(x), missing_left[trees, node], x <= threshold[trees, node])
            node = np.where(go_left, left[trees, node], right[trees, node])
        leaves = np.hstack([np.full((matrix.shape[0], 1), self.baseline), value[trees, node]])
        return np.cumsum(leaves, axis=1)[:, -1]  # left to right, as the fitting library adds them

    def used_features(self) -> set[str]:
        return {self.features[f] for t in self.trees for f, left in zip(t.feature, t.left, strict=True) if left != -1}


def _ranker_kind(value: dict[str, Any] | BaseModel) -> str:
    # Files written before tree rankers existed have no `kind`: they hold a linear ranker.
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind or "logistic"


Ranker = Annotated[
    Annotated[LinearModel, Tag("logistic")] | Annotated[TreeEnsemble, Tag("trees")], Discriminator(_ranker_kind)
]


class RouterModel(BaseModel):
    """How several documents are told apart (`services/navigator/route_features.py`): a linear routing
    score over the routing features (no intercept: only differences between documents count),
    and the weight of log P(document | question) in every page's score."""

    features: list[str]
    coef: list[float]
    prior_weight: float = Field(ge=0.0)

    @model_validator(mode="after")
    def _same_lengths(self) -> RouterModel:
        if len(self.coef) != len(self.features):
            raise ValueError(f"router has {len(self.features)} features but {len(self.coef)} weights; refit it")
        return self

    def scores(self, matrix: np.ndarray) -> np.ndarray:
        return matrix @ np.asarray(self.coef) if matrix.size else np.zeros(matrix.shape[0])


class RankingModel(BaseModel):
    version: int = 1
    ranker: Ranker
    abstention: LinearModel
    # None in files fitted before routing was: `routing.UNFITTED_ROUTER` then.
    router: RouterModel | None = None
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


FittedFile = TypeVar("FittedFile", bound=BaseModel)


@lru_cache(maxsize=8)
def model_for(embedder: str | None, paths: tuple[Path, ...] = DENSE_MODEL_PATHS) -> RankingModel:
    """The model of `paths` fitted with `embedder` (a model name, None when embeddings are
    off), else the lexical model. A path with no file is passed over (a model not fitted yet).
    Cached: every query asks, and the model files do not change while a process runs."""
    if embedder is not None:
        for path in paths:
            if not path.is_file():
                continue
            model = load_model(path)
            if model.fitted_on.get("embeddings") == embedder:
                return model
    return load_model(LEXICAL_MODEL_PATH)


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> RankingModel:
    """A model file (cached)."""
    return read_model_file(RankingModel, path, "python -m bench.fit_ranker")


def read_model_file(kind: type[FittedFile], path: Path, regenerate: str) -> FittedFile:
    """A fitted model's JSON file, or a `ModelFileError` saying how to regenerate it."""
    try:
        return kind.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"cannot read the fitted model {path}: {exc}; regenerate it with `{regenerate}`") from exc
