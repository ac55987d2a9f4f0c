"""What the sequence-pair ONNX models (the verifier's NLI model, the navigator's reranker) share:
one run of the model on one tokenised (first, second) pair, and how their folder settings say
"none"."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class PairEncoding(Protocol):
    @property
    def ids(self) -> list[int]: ...

    @property
    def attention_mask(self) -> list[int]: ...

    @property
    def type_ids(self) -> list[int]: ...


def is_off(setting: str) -> bool:
    """A model-folder setting that asks for no model."""
    return setting.strip().lower() in ("", "off", "none", "0", "false")


def pair_logits(session: Any, inputs: set[str], encoded: PairEncoding) -> np.ndarray:
    """The model's output row for one pair; `inputs` are the names the model takes (a model
    exported without token types takes none)."""
    feed = {
        "input_ids": np.array([encoded.ids], dtype=np.int64),
        "attention_mask": np.array([encoded.attention_mask], dtype=np.int64),
        "token_type_ids": np.array([encoded.type_ids], dtype=np.int64),
    }
    return np.asarray(session.run(None, {k: v for k, v in feed.items() if k in inputs})[0])[0]
