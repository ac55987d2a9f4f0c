"""An NLI cross-encoder read from a local folder (`TREERAG_NLI=PATH`), run with onnxruntime.

The folder holds `model.onnx` (a sequence-pair classifier exported from a cross-encoder),
`tokenizer.json` (its fast tokenizer) and `config.json` (with `id2label` naming entailment,
neutral and contradiction). Nothing is downloaded at run time.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path

import numpy as np

from shared.adapters.onnx_pairs import is_off, pair_logits
from shared.ports.model_roles import EntailmentJudge

logger = logging.getLogger(__name__)

LABELS = ("entailment", "neutral", "contradiction")
MAX_TOKENS = 512


class EntailmentModelError(RuntimeError):
    """The entailment model folder cannot be used; the message says what is missing."""


class OnnxEntailmentJudge:
    def __init__(self, folder: Path) -> None:
        missing = [n for n in ("model.onnx", "tokenizer.json", "config.json") if not (folder / n).is_file()]
        if missing:
            raise EntailmentModelError(
                f"TREERAG_NLI={folder}: {', '.join(missing)} missing; the folder needs model.onnx, tokenizer.json "
                "and config.json of an NLI cross-encoder exported to ONNX, or set TREERAG_NLI=off"
            )
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EntailmentModelError(
                f"TREERAG_NLI={folder} needs onnxruntime and tokenizers: pip install 'treerag[nli]'"
            ) from exc

        labels = json.loads((folder / "config.json").read_text()).get("id2label", {})
        self.order = [str(labels.get(str(i), labels.get(i, ""))).lower() for i in range(len(labels))]
        if sorted(self.order) != sorted(LABELS):
            raise EntailmentModelError(
                f"TREERAG_NLI={folder}: config.json id2label is {self.order}; an NLI model labels "
                "entailment, neutral and contradiction"
            )
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.name = f"nli:{folder.name}"

    def judge(self, premise: str, hypothesis: str) -> dict[str, float]:
        logits = pair_logits(self.session, self.inputs, self.tokenizer.encode(premise, hypothesis))
        exp = np.exp(logits - logits.max())
        probabilities = exp / exp.sum()
        return {label: float(p) for label, p in zip(self.order, probabilities, strict=True)}


def answer_key_suffix(setting: str) -> str:
    """What the answer-cache key adds for an entailment model (it changes verdicts), known to
    every stage without loading the model."""
    return "" if is_off(setting) else f"+nli:{Path(setting).expanduser().name}"


def make_entailment_judge(setting: str) -> EntailmentJudge | None:
    """None for 'off' (the default); else the model in the named folder."""
    if is_off(setting):
        return None
    judge = OnnxEntailmentJudge(Path(setting).expanduser())
    logger.info("entailment model loaded", extra={"model": judge.name})
    return judge


@lru_cache(maxsize=4)
def configured_judge(setting: str) -> EntailmentJudge | None:
    """`make_entailment_judge`, loaded once per process and setting."""
    return make_entailment_judge(setting)
