"""A passage reranker read from a local folder (`TREERAG_RERANKER=PATH`), run with onnxruntime.

The folder holds `model.onnx` (a cross-encoder with one relevance logit per (question,
passage) pair, e.g. ms-marco-MiniLM-L-12-v2 exported to ONNX) and `tokenizer.json` (its fast
tokenizer); `scripts/models/reranker.sh fetch` makes one. Nothing is downloaded at run time.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from shared.adapters.embeddings.folder_identity import folder_model_name
from shared.adapters.logs import log_fields
from shared.adapters.onnx_pairs import is_off, pair_logits
from shared.ports.model_roles import PassageScorer

logger = logging.getLogger(__name__)

MAX_TOKENS = 512


class RerankerModelError(RuntimeError):
    """The reranker folder cannot be used; the message says what is missing."""


class OnnxPassageScorer:
    def __init__(self, folder: Path) -> None:
        missing = [n for n in ("model.onnx", "tokenizer.json") if not (folder / n).is_file()]
        if missing:
            raise RerankerModelError(
                f"TREERAG_RERANKER={folder}: {', '.join(missing)} missing; fetch a reranker with "
                "`scripts/models/reranker.sh fetch` and point TREERAG_RERANKER at the folder it prints "
                "(`scripts/models/reranker.sh path`), or set TREERAG_RERANKER=off"
            )
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        try:
            self.session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors for a broken file
            raise RerankerModelError(f"TREERAG_RERANKER={folder}: model.onnx does not load ({exc})") from exc
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.name = f"cross-encoder:{folder_model_name(folder)}"

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        # One run per pair: an int8 model quantises each run's activations over the whole batch,
        # so a batch would make a passage's score depend on the passages beside it (and its padding).
        return [self._score_pair(question, passage) for passage in passages]

    def _score_pair(self, question: str, passage: str) -> float:
        return float(pair_logits(self.session, self.inputs, self.tokenizer.encode(question, passage)).reshape(-1)[0])


@lru_cache(maxsize=4)
def configured_scorer(setting: str) -> PassageScorer | None:
    """None for 'off' (the default); else the reranker in the named folder, loaded once per
    process and setting."""
    if is_off(setting):
        return None
    scorer = OnnxPassageScorer(Path(setting).expanduser())
    logger.info("reranker loaded", extra=log_fields(model=scorer.name))
    return scorer
