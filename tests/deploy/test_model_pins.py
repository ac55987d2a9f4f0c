"""Model files are checked against their pinned SHA-256 before they are used: a cached model
whose file was changed is refused by its fetch script, naming the file and both hashes, and the
licence files that say where each model comes from are shipped."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = {"bge-small.sh": "bge-small-en-v1.5-q", "reranker.sh": None}


def _assignment(script: str, name: str) -> str:
    found = re.search(rf'^{name}="?([^"\n]+)"?$', (REPO / "scripts" / "models" / script).read_text(), re.M)
    assert found, f"{script} sets no {name}"
    return found.group(1)


def _pins(script: str) -> dict[str, str]:
    block = re.search(r"^PINNED=\((.*?)^\)", (REPO / "scripts" / "models" / script).read_text(), re.M | re.S)
    assert block, f"{script} pins no file"
    return dict(re.findall(r"^\s*([\w./-]+)=([0-9a-f]{64})\s*$", block.group(1), re.M))


def _verify(folder: Path, *pins: str) -> subprocess.CompletedProcess[str]:
    snippet = ('source scripts/infra/lib.sh; source scripts/models/lib.sh; '
               'model_verify "$0" "delete it and fetch again" "$@"')
    return subprocess.run(["bash", "-c", snippet, str(folder), *pins], cwd=REPO, capture_output=True, text=True,
                          timeout=30)


def test_a_file_with_its_pinned_hash_passes_and_a_changed_one_is_refused_by_name(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"weights")
    pinned = hashlib.sha256(b"weights").hexdigest()
    assert _verify(tmp_path, f"model.onnx={pinned}").returncode == 0

    model.write_bytes(b"weights, changed")
    refused = _verify(tmp_path, f"model.onnx={pinned}")
    assert refused.returncode != 0
    assert "model.onnx" in refused.stderr and pinned in refused.stderr
    assert hashlib.sha256(b"weights, changed").hexdigest() in refused.stderr and "fetch again" in refused.stderr

    model.unlink()
    missing = _verify(tmp_path, f"model.onnx={pinned}")
    assert missing.returncode != 0 and "missing" in missing.stderr


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_fetch_script_pins_its_files(script: str) -> None:
    pins = _pins(script)
    assert pins and all(len(digest) == 64 for digest in pins.values())


def test_a_cached_model_whose_file_was_changed_is_refused_before_use(tmp_path: Path) -> None:
    """The cached path of the real fetch script: no download, the folder checked as it is."""
    folder = tmp_path / "models" / "bge-small-en-v1.5-q"
    folder.mkdir(parents=True)
    for name in _pins("bge-small.sh"):
        (folder / name).write_bytes(b"not the pinned bytes")
    (folder / ".treerag-complete").write_text(_assignment("bge-small.sh", "ARTIFACT").replace(
        "$VERSION", _assignment("bge-small.sh", "VERSION")))
    done = subprocess.run([str(REPO / "scripts" / "models" / "bge-small.sh"), "fetch"], cwd=REPO,
                          env={**os.environ, "TREERAG_CACHE": str(tmp_path)}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert "not the pinned" in done.stderr and "the cached model was changed" in done.stderr


def test_the_licence_and_the_models_origins_are_shipped() -> None:
    assert "Apache License" in (REPO / "LICENSE").read_text() or "MIT" in (REPO / "LICENSE").read_text()
    notice = (REPO / "NOTICE").read_text()
    for model in ("WordLlama", "Llama 2", "bge-small-en-v1.5", "SmolLM2"):
        assert model in notice, f"NOTICE does not name {model}"
