"""The `Embedder` contract every backend keeps: its dimension, unit vectors, the same vector for
the same text, and related texts closer than unrelated ones; and how each backend loads."""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shared.adapters.embeddings import EmbeddingsConfigError, make_embedder
from shared.adapters.embeddings.fastembed_backend import FastEmbedEmbedder
from shared.adapters.embeddings.wordllama_backend import WordLlamaEmbedder
from shared.settings import Settings
from tests.support.embeddings import standin

TEXTS = [
    "How do I install a package from a local file?",
    "Installing packages: install.packages() downloads and installs a package from a repository.",
    "The weather tomorrow will be sunny with light winds.",
    "",
]


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


def _assert_contract(vectors: np.ndarray, dimension: int, texts: list[str]) -> None:
    assert vectors.shape == (len(texts), dimension) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    for text, norm in zip(texts, norms, strict=True):
        assert norm == pytest.approx(0.0 if not text.strip() else 1.0, abs=1e-5)


def test_wordllama_keeps_the_contract_and_ranks_related_text_first(wordllama: WordLlamaEmbedder) -> None:
    vectors = wordllama.embed(TEXTS)
    _assert_contract(vectors, 256, TEXTS)
    assert wordllama.dimension == 256 and wordllama.name.startswith("wordllama:")
    question, answer, unrelated = vectors[:3]
    assert question @ answer > question @ unrelated + 0.1
    # The same text gives the same vector, alone or in a batch, in this or another instance.
    assert np.array_equal(wordllama.embed([TEXTS[1]])[0], vectors[1])
    assert np.array_equal(WordLlamaEmbedder().embed(TEXTS), vectors)


def test_wordllama_equals_the_library_on_whitespace_collapsed_text(wordllama: WordLlamaEmbedder) -> None:
    from pathlib import Path as _Path

    import wordllama as package
    from wordllama import WordLlama

    library = WordLlama.load(cache_dir=_Path(package.__file__).parent, disable_download=True)
    texts = ["A page\nwith  lines,\tpunctuation (and) numbers 3.14", "Ünïcödé — dashes and x_y names"]
    expected = library.embed([" ".join(t.split()) for t in texts], norm=True)
    assert np.allclose(wordllama.embed(texts), expected, atol=1e-5)


def test_wordllama_truncated_dimensions_are_unit_vectors() -> None:
    small = WordLlamaEmbedder(128)
    _assert_contract(small.embed(TEXTS), 128, TEXTS)
    assert small.name != WordLlamaEmbedder().name  # vectors of the two never mix
    with pytest.raises(EmbeddingsConfigError, match="dimensions"):
        WordLlamaEmbedder(100)


def test_off_loads_nothing_and_wordllama_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TREERAG_EMBEDDINGS", raising=False)
    assert make_embedder(Settings(embeddings="off")) is None
    default = make_embedder(Settings())
    assert default is not None and default.name.startswith("wordllama:")
    assert make_embedder(Settings()) is default  # loaded once per process


def test_fastembed_loads_a_local_model_folder_without_network(tmp_path: Path) -> None:
    table = standin.token_table()
    folder = standin.onnx_model_folder(tmp_path / "standin-model", table)
    embedder = make_embedder(Settings(embeddings="fastembed", embeddings_path=folder))
    assert isinstance(embedder, FastEmbedEmbedder)
    texts = ["install package", "weather sunny rain", "plot graph graph", ""]
    vectors = embedder.embed(texts)
    _assert_contract(vectors, standin.DIMENSION, texts)
    for text, vector in zip(texts[:3], vectors[:3], strict=True):
        assert np.allclose(vector, standin.expected_vector(text, table), atol=1e-5)
    assert np.array_equal(embedder.embed(texts), vectors)


def test_fastembed_pools_a_folder_as_its_pooling_file_says(tmp_path: Path) -> None:
    table = standin.token_table()
    texts = ["install package", "weather sunny rain", "plot graph graph"]
    first = standin.onnx_model_folder(tmp_path / "first-token", table)
    standin.pooling_file(first, pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    mean = standin.onnx_model_folder(tmp_path / "mean", table)
    standin.pooling_file(mean, pooling_mode_cls_token=False, pooling_mode_mean_tokens=True)
    for folder, expected in ((first, standin.first_token_vector), (mean, standin.expected_vector)):
        vectors = FastEmbedEmbedder(path=folder).embed(texts)
        _assert_contract(vectors, standin.DIMENSION, texts)
        for text, vector in zip(texts, vectors, strict=True):
            assert np.allclose(vector, expected(text, table), atol=1e-5)
    # Same weights, another pooling: another model, whose vectors are never mixed with these.
    assert FastEmbedEmbedder(path=first).name != FastEmbedEmbedder(path=mean).name


def test_fastembed_refuses_a_pooling_it_does_not_run(tmp_path: Path) -> None:
    folder = standin.onnx_model_folder(tmp_path / "max", standin.token_table())
    standin.pooling_file(folder, pooling_mode_max_tokens=True)
    with pytest.raises(EmbeddingsConfigError, match="first token or mean of tokens"):
        FastEmbedEmbedder(path=folder)
    (folder / "1_Pooling" / "config.json").write_text("{not json")
    with pytest.raises(EmbeddingsConfigError, match="not readable JSON"):
        FastEmbedEmbedder(path=folder)


def test_fastembed_says_what_is_wrong_with_a_bad_folder(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingsConfigError, match="not a folder"):
        FastEmbedEmbedder(path=tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbeddingsConfigError, match="model.onnx"):
        FastEmbedEmbedder(path=tmp_path / "empty")


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None,
                    reason="checks the message shown when the package is missing")
def test_sentence_transformers_without_the_package_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingsConfigError, match=r"treerag\[sentence-transformers\]"):
        make_embedder(Settings(embeddings="sentence-transformers", embeddings_path=tmp_path))


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="sentence-transformers (and PyTorch) not installed: pip install 'treerag[sentence-transformers]'")
def test_sentence_transformers_loads_a_saved_model_folder_without_network(tmp_path: Path) -> None:
    from shared.adapters.embeddings.sentence_transformers_backend import (
        SentenceTransformerEmbedder,
    )

    table = standin.token_table()
    folder = standin.sentence_transformers_folder(tmp_path / "st-model", table)
    embedder = make_embedder(Settings(embeddings="sentence-transformers", embeddings_path=folder))
    assert isinstance(embedder, SentenceTransformerEmbedder)
    texts = ["install package", "weather sunny rain", ""]
    vectors = embedder.embed(texts)
    _assert_contract(vectors, standin.DIMENSION, texts)
    for text, vector in zip(texts[:2], vectors[:2], strict=True):
        assert np.allclose(vector, standin.expected_vector(text, table), atol=1e-5)
    assert embedder.name.startswith("sentence-transformers:st-model@")
    # One PyTorch thread per process, as the fastembed backend: processes are what scale.
    import torch

    assert torch.get_num_threads() == 1


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="sentence-transformers (and PyTorch) not installed: pip install 'treerag[sentence-transformers]'")
def test_sentence_transformers_models_packaged_in_folders_named_alike_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Packages that ship a model keep it in a folder called `model`: stored vectors are matched
    to the model by name, so two such models must not share one. Loading needs no network."""
    from shared.adapters.embeddings.sentence_transformers_backend import (
        SentenceTransformerEmbedder,
    )

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    first = standin.sentence_transformers_folder(tmp_path / "a" / "model", standin.token_table(1))
    second = standin.sentence_transformers_folder(tmp_path / "b" / "model", standin.token_table(2))
    one, other = SentenceTransformerEmbedder(path=first), SentenceTransformerEmbedder(path=second)
    assert one.name != other.name
    assert SentenceTransformerEmbedder(path=first).name == one.name
    assert not np.allclose(one.embed(["install package"]), other.embed(["install package"]))


def test_loading_wordllama_leaves_the_process_log_settings_alone() -> None:
    """The library configures the root logger when imported; a CLI at its default level must
    not start printing every library's INFO lines."""
    probe = (
        "import logging\n"
        "from shared.adapters.embeddings.wordllama_backend import WordLlamaEmbedder\n"
        "WordLlamaEmbedder(64)\n"
        "root = logging.getLogger()\n"
        "print(root.level, len(root.handlers))\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                               cwd=Path(__file__).resolve().parents[5])
    assert completed.stdout.split() == [str(logging.WARNING), "0"]
    assert "INFO" not in completed.stderr
