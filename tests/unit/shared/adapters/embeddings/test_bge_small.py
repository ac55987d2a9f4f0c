"""The stronger embedder a deployment fetches once (`scripts/models/bge-small.sh`, Maven
Central): it loads with no further download, keeps the `Embedder` contract, and is exactly the
model the shipped `model-bge-small.json` was fitted with, so the navigator ranks with it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from services.navigator.ranking.model import BGE_MODEL_PATH, load_model, model_for
from shared.adapters.embeddings import make_embedder
from shared.settings import Settings

SCRIPT = Path(__file__).resolve().parents[5] / "scripts" / "models" / "bge-small.sh"


@pytest.fixture(scope="module")
def bge_folder() -> Path:
    fetched = subprocess.run([str(SCRIPT), "fetch"], capture_output=True, text=True, timeout=600)
    assert fetched.returncode == 0, fetched.stderr
    folder = Path(subprocess.run([str(SCRIPT), "path"], capture_output=True, text=True, check=True).stdout.strip())
    assert (folder / "model.onnx").is_file() and (folder / "1_Pooling" / "config.json").is_file()
    return folder


def test_the_fetched_model_embeds_questions_near_their_passages(bge_folder: Path) -> None:
    embedder = make_embedder(Settings(embeddings="fastembed", embeddings_path=bge_folder))
    assert embedder is not None and embedder.dimension == 384
    texts = [
        "How do I install a package from a local file?",
        "Installing packages: install.packages() downloads and installs a package from a repository.",
        "The weather tomorrow will be sunny with light winds.",
        "",
    ]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5) and not vectors[3].any()
    question, passage, weather = vectors[:3]
    assert float(question @ passage) > float(question @ weather) + 0.1
    assert np.array_equal(embedder.embed(texts), vectors)


def test_the_fetched_model_is_the_one_its_ranking_model_was_fitted_with(bge_folder: Path) -> None:
    embedder = make_embedder(Settings(embeddings="fastembed", embeddings_path=bge_folder))
    assert embedder is not None
    fitted = load_model(BGE_MODEL_PATH)
    assert fitted.fitted_on["embeddings"] == embedder.name
    assert model_for(embedder.name) == fitted
