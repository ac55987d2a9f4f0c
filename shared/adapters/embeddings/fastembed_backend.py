"""fastembed: ONNX embedding models, downloaded once into a cache folder or read from a local one.

Named models (`TREERAG_EMBEDDINGS_MODEL`, default `DEFAULT_MODEL`) are fetched by fastembed on
first use into `TREERAG_EMBEDDINGS_CACHE`; later loads read the cache. A local folder
(`TREERAG_EMBEDDINGS_PATH`) with `model.onnx` (or `onnx/model.onnx`), `tokenizer.json`,
`tokenizer_config.json` and `config.json` is loaded with no download, pooled as its
`1_Pooling/config.json` says (the sentence-transformers layout: the first token for models such
as BGE, the mean of the tokens otherwise), mean-pooled when the folder has no such file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from shared.adapters.embeddings.errors import EmbeddingsConfigError
from shared.adapters.embeddings.folder_identity import folder_model_name
from shared.adapters.embeddings.normalise import unit_rows

DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
# Texts per ONNX run: long pages make wide batches, and memory grows with the width.
BATCH_SIZE = 32


def _model_file(folder: Path) -> str:
    for candidate in ("model.onnx", "onnx/model.onnx"):
        if (folder / candidate).is_file():
            return candidate
    raise EmbeddingsConfigError(f"no model.onnx (or onnx/model.onnx) in {folder}; point TREERAG_EMBEDDINGS_PATH at a model folder")


def _hidden_size(folder: Path) -> int:
    config = folder / "config.json"
    try:
        return int(json.loads(config.read_text())["hidden_size"])
    except (OSError, KeyError, ValueError) as exc:
        raise EmbeddingsConfigError(f"{config} must exist and give the model's hidden_size") from exc


def _pooling(folder: Path) -> str:
    """"CLS" or "MEAN", from the folder's sentence-transformers pooling file (MEAN without one)."""
    config = folder / "1_Pooling" / "config.json"
    if not config.is_file():
        return "MEAN"
    try:
        modes = json.loads(config.read_text())
    except (OSError, ValueError) as exc:
        raise EmbeddingsConfigError(f"{config} is not readable JSON: {exc}") from exc
    if modes.get("pooling_mode_cls_token"):
        return "CLS"
    if modes.get("pooling_mode_mean_tokens"):
        return "MEAN"
    raise EmbeddingsConfigError(
        f"{config} asks for a pooling this backend does not run (first token or mean of tokens only)"
    )


class FastEmbedEmbedder:
    def __init__(self, model: str | None = None, path: Path | None = None, cache: Path | None = None) -> None:
        try:
            from fastembed import TextEmbedding
            from fastembed.common.model_description import ModelSource, PoolingType
        except ImportError as exc:
            raise EmbeddingsConfigError(
                "the fastembed backend needs `pip install 'treerag[fastembed]'`; or set TREERAG_EMBEDDINGS=wordllama"
            ) from exc
        options: dict[str, Any] = {"threads": 1}
        if cache is not None:
            options["cache_dir"] = str(cache)
        if path is not None:
            folder = Path(path)
            if not folder.is_dir():
                raise EmbeddingsConfigError(f"TREERAG_EMBEDDINGS_PATH={folder} is not a folder")
            resolved = folder.resolve()
            model_name = f"local/{folder_model_name(resolved)}"
            model_file, dimension, pooling = _model_file(folder), _hidden_size(folder), _pooling(folder)
            # fastembed's registry is process-wide: one entry per folder, whatever its name.
            registered = f"{model_name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}"
            if not any(m["model"].lower() == registered.lower() for m in TextEmbedding.list_supported_models()):
                TextEmbedding.add_custom_model(
                    model=registered, pooling=PoolingType[pooling], normalization=True,
                    sources=ModelSource(hf=registered), dim=dimension, model_file=model_file,
                )
            options["specific_model_path"] = str(folder)
            options["local_files_only"] = True
        else:
            model_name = registered = model or DEFAULT_MODEL
        try:
            self._model = TextEmbedding(registered, **options)
        except ValueError as exc:
            raise EmbeddingsConfigError(f"fastembed cannot load {model_name!r}: {exc}") from exc
        self.dimension = int(self._model.embedding_size)
        self.name = f"fastembed:{model_name}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.stack(list(self._model.embed(texts, batch_size=BATCH_SIZE)))
        # Empty texts still come out as vectors of the special tokens: the port says zero.
        vectors[[not t.strip() for t in texts]] = 0.0
        return unit_rows(vectors)
