"""The verifier's word vectors follow the embeddings setting and never stop verification."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.adapters.embeddings.words import word_vectors
from shared.settings import Settings
from shared.text.grounding import default_fit


def test_off_means_lexical_and_a_backend_that_cannot_load_falls_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert word_vectors(Settings(embeddings="off")) is None
    broken = Settings(embeddings="fastembed", embeddings_path=tmp_path / "no-model-here")
    with caplog.at_level("WARNING"):
        assert word_vectors(broken) is None
    assert "scores replaced words lexically" in caplog.text


def test_default_embedder_has_a_shipped_fit() -> None:
    vectors = word_vectors(Settings(embeddings="wordllama"))
    assert vectors is not None
    assert default_fit(vectors.name).word_vectors == vectors.name
    assert vectors.similarity("large", "big") > vectors.similarity("large", "mitochondria")
