"""A model read from a folder is named by its files, so vectors of two models never mix."""

from __future__ import annotations

import shutil
from pathlib import Path

from shared.adapters.embeddings.folder_identity import folder_model_name
from tests.support.embeddings import standin


def _saved_model(folder: Path, seed: int) -> Path:
    """A model-shaped folder: configuration, tokenizer and weights, one in a subfolder."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"hidden_size": 8}')
    standin.word_tokenizer().save(str(folder / "tokenizer.json"))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    (folder / "model.safetensors").write_bytes(standin.token_table(seed).tobytes())
    return folder


def test_two_packaged_models_in_folders_of_the_same_name_get_different_names(tmp_path: Path) -> None:
    first = folder_model_name(_saved_model(tmp_path / "a" / "model", seed=1))
    second = folder_model_name(_saved_model(tmp_path / "b" / "model", seed=2))
    assert first.startswith("model@") and second.startswith("model@")
    assert first != second


def test_a_copied_model_keeps_its_name_and_a_changed_file_changes_it(tmp_path: Path) -> None:
    original = _saved_model(tmp_path / "one" / "model", seed=3)
    copy = Path(shutil.copytree(original, tmp_path / "two" / "model"))
    (copy / ".gitattributes").write_text("*.safetensors filter=lfs\n")  # not part of the model
    assert folder_model_name(copy) == folder_model_name(original)
    (copy / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert folder_model_name(copy) != folder_model_name(original)
