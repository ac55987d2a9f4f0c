"""The cross-encoder adapter (`shared/adapters/reranker.py`): on a stand-in ONNX model made
here, it scores each (question, passage) pair as the model computes it and refuses folders it
cannot use with a message saying what to do; on the real reranker a deployment fetches once
(`scripts/models/reranker.sh`, PyPI), it prefers the passage that answers, and it is exactly
the model the shipped `rerank.json` weight was fitted for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from services.navigator.ranking.rerank import (
    RERANK_MODEL_PATH,
    load_rerank_model,
    reranking_identity,
)
from shared.adapters.reranker import OnnxPassageScorer, RerankerModelError, configured_scorer
from tests.support.navigation import reranking as configured_reranking

SCRIPT = Path(__file__).resolve().parents[4] / "scripts" / "models" / "reranker.sh"
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "pump", "valve", "pressure", "weather", "sunny"]
# The stand-in's whole knowledge: what each passage word adds to the logit.
WEIGHTS = np.array([0.0, -0.5, 0.0, 0.0, 2.0, 1.5, 1.0, -3.0, -2.0], dtype=np.float32)


def standin_cross_encoder(folder: Path) -> Path:
    """A cross-encoder-shaped ONNX model (input_ids, attention_mask, token_type_ids -> logits of
    shape [batch, 1]) whose logit is the sum of WEIGHTS over the passage's tokens."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from tokenizers.processors import TemplateProcessing

    ints = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes=[
            helper.make_node("Gather", ["weights", "input_ids"], ["per_token"], axis=0),
            helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
            helper.make_node("Cast", ["token_type_ids"], ["second"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["per_token", "mask"], ["kept"]),
            helper.make_node("Mul", ["kept", "second"], ["passage"]),
            helper.make_node("ReduceSum", ["passage", "axes"], ["logits"], keepdims=1),
        ],
        name="standin-cross-encoder",
        inputs=[helper.make_tensor_value_info(n, TensorProto.INT64, ints)
                for n in ("input_ids", "attention_mask", "token_type_ids")],
        outputs=[helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[numpy_helper.from_array(WEIGHTS, name="weights"),
                     numpy_helper.from_array(np.array([1], dtype=np.int64), name="axes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(VOCABULARY)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def _expected(passage: str) -> float:
    return float(sum(WEIGHTS[VOCABULARY.index(w) if w in VOCABULARY else 1] for w in passage.split()))


def test_each_pair_is_scored_as_the_model_computes_it(tmp_path: Path) -> None:
    scorer = OnnxPassageScorer(standin_cross_encoder(tmp_path / "standin"))
    passages = ["pump pressure", "sunny weather today and tomorrow", "valve", "pump valve pressure pump"]
    scores = scorer.score("pump pressure question", passages)
    assert scores == pytest.approx([_expected(p) for p in passages])
    assert scorer.score("pump", []) == []
    assert scorer.name.startswith("cross-encoder:standin@")


def test_a_folder_it_cannot_use_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(RerankerModelError, match="tokenizer.json missing; fetch a reranker with"):
        (tmp_path / "half").mkdir()
        (tmp_path / "half" / "model.onnx").write_bytes(b"")
        OnnxPassageScorer(tmp_path / "half")
    broken = standin_cross_encoder(tmp_path / "broken")
    (broken / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(RerankerModelError, match="model.onnx does not load"):
        OnnxPassageScorer(broken)


def test_a_reranker_without_a_fitted_weight_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    folder = standin_cross_encoder(tmp_path / "unfitted")
    monkeypatch.setenv("TREERAG_RERANKER", str(folder))
    assert configured_scorer(str(folder)) is not None
    with caplog.at_level("WARNING"):
        assert configured_reranking() is None
    assert "no weight fitted for it" in caplog.text


@pytest.fixture(scope="module")
def reranker_folder() -> Path:
    env = os.environ | {"PYTHON": sys.executable}
    fetched = subprocess.run([str(SCRIPT), "fetch"], capture_output=True, text=True, timeout=900, env=env)
    assert fetched.returncode == 0, fetched.stderr
    folder = Path(subprocess.run([str(SCRIPT), "path"], capture_output=True, text=True, check=True, env=env).stdout.strip())
    assert (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()
    return folder


def test_the_fetched_reranker_prefers_the_passage_that_answers(reranker_folder: Path) -> None:
    scorer = OnnxPassageScorer(reranker_folder)
    question = "How often must the pump be serviced?"
    answers = "The pump must be serviced every 500 hours of operation by a qualified engineer."
    mentions = "The pump is shown in figure 3. Pumps and valves are listed in the parts catalogue."
    unrelated = "The weather tomorrow will be sunny with light winds."
    answer, mention, weather = scorer.score(question, [answers, mentions, unrelated])
    assert answer > mention > weather
    assert answer > 0 > weather
    # A passage scores the same whatever is scored beside it.
    assert scorer.score(question, [answers]) == [answer]
    assert scorer.score(question, [unrelated, answers])[1] == answer


def test_the_fetched_reranker_is_the_one_its_weight_was_fitted_for(reranker_folder: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = OnnxPassageScorer(reranker_folder)
    assert load_rerank_model(RERANK_MODEL_PATH).scorer == scorer.name
    monkeypatch.setenv("TREERAG_RERANKER", str(reranker_folder))
    reranking = configured_reranking()
    assert reranking is not None and reranking.model.weight > 0 and reranking.model.abstention is not None


def test_answers_reranked_are_cached_apart_from_answers_ranked_without_it(reranker_folder: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.stages import QueryStages, question

    monkeypatch.setenv("TREERAG_RERANKER", "off")
    plain = QueryStages().navigator
    monkeypatch.setenv("TREERAG_RERANKER", str(reranker_folder))
    reranked = QueryStages().navigator
    event, documents = question("How often is the pump serviced?"), [("a" * 16, 1)]
    assert reranked.answer_key(event, documents) != plain.answer_key(event, documents)
    assert reranking_identity(configured_reranking()).startswith("+rerank:cross-encoder:ms-marco-minilm-l12-q@")
