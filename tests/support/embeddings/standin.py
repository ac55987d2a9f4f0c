"""Small local models made on the spot, standing in for downloaded ones: the loading paths of
the fastembed and sentence-transformers backends run on them with no network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WORDS = ["[PAD]", "[UNK]", "install", "package", "library", "weather", "sunny", "rain", "plot", "graph"]
DIMENSION = 8


def token_table(seed: int = 7) -> np.ndarray:
    """One row per word of WORDS: the stand-in model's whole knowledge."""
    table = np.random.default_rng(seed).normal(size=(len(WORDS), DIMENSION)).astype(np.float32)
    table[0] = 0.0
    return table


def word_tokenizer():  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    return tokenizer


def expected_vector(text: str, table: np.ndarray) -> np.ndarray:
    """Mean of the tokens' rows, unit length: what a mean-pooled model of `table` returns."""
    ids = [WORDS.index(w) if w in WORDS else 1 for w in text.split()]
    vector = table[ids].mean(axis=0)
    return vector / np.linalg.norm(vector)


def first_token_vector(text: str, table: np.ndarray) -> np.ndarray:
    """The first token's row, unit length: what a CLS-pooled model of `table` returns."""
    first = text.split()[0]
    vector = table[WORDS.index(first) if first in WORDS else 1]
    return vector / np.linalg.norm(vector)


def pooling_file(folder: Path, **modes: bool) -> None:
    """The sentence-transformers pooling configuration, e.g. `pooling_mode_cls_token=True`."""
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": DIMENSION, **modes}))


def onnx_model_folder(folder: Path, table: np.ndarray) -> Path:
    """A transformer-shaped ONNX model (input_ids, attention_mask -> last_hidden_state) whose
    hidden state is the token's row of `table`, with the files fastembed reads beside it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        nodes=[helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        name="standin",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIMENSION])],
        initializer=[numpy_helper.from_array(table, name="table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    word_tokenizer().save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"hidden_size": DIMENSION}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 64, "pad_token": "[PAD]"}))
    (folder / "special_tokens_map.json").write_text(json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]"}))
    return folder


def sentence_transformers_folder(folder: Path, table: np.ndarray) -> Path:
    """A sentence-transformers model (static token embeddings, mean-pooled) saved to `folder`."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding

    module = StaticEmbedding(word_tokenizer(), embedding_weights=table)
    SentenceTransformer(modules=[module], device="cpu").save(str(folder))
    return folder
