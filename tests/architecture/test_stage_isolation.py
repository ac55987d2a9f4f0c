"""Each stage stands alone: with only `shared/` and its own folder beside it, it imports and
declares itself. This is what the import contracts promise and what each stage's image holds."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
QUERY_AND_INDEX_STAGES = ("indexer", "navigator", "compressor", "verifier")

# Run in a fresh interpreter that finds our packages only in the folder it is given: the
# editable install's finder (which would reach back into the checkout) is removed first.
PROBE = r"""
import importlib, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
stage = sys.argv[1]
main = importlib.import_module(f"services.{stage}.main")
root = sys.argv[2]
ours = {n: m for n, m in sys.modules.items() if n.split(".")[0] in ("shared", "services", "treerag")}
outside = [n for n, m in ours.items() if not (getattr(m, "__file__", None) or root).startswith(root)]
assert not outside, f"loaded from outside the stage's folder: {outside}"
assert not [n for n in ours if n.startswith("services.") and not n.startswith(f"services.{stage}")], ours
declared = getattr(main, "STAGE", None)
print(declared.name if declared is not None else type(main.app).__name__)
"""


def _copy_stage(stage: str, into: Path) -> None:
    shutil.copytree(REPO / "shared", into / "shared", ignore=shutil.ignore_patterns("__pycache__"))
    (into / "services").mkdir()
    shutil.copy2(REPO / "services" / "__init__.py", into / "services" / "__init__.py")
    shutil.copytree(REPO / "services" / stage, into / "services" / stage,
                    ignore=shutil.ignore_patterns("__pycache__"))


@pytest.mark.parametrize("stage", [*QUERY_AND_INDEX_STAGES, "gateway"])
def test_a_stage_imports_with_only_shared_beside_it(stage: str, tmp_path: Path) -> None:
    _copy_stage(stage, tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, stage, str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "TREERAG_METRICS_DIR": str(tmp_path / "m")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == (stage if stage != "gateway" else "FastAPI")


def test_each_stage_image_is_built_from_shared_and_its_own_folder_only() -> None:
    dockerfile = (REPO / "deploy" / "docker" / "Dockerfile").read_text()
    copied = re.findall(r"^COPY (\S+)", dockerfile, re.MULTILINE)
    assert copied == ["requirements/stage.lock", "shared", "services/__init__.py", "services/${STAGE}"]
    assert "--require-hashes --no-deps" in dockerfile
    assert "ARG STAGE" in dockerfile


# What an image built from a lock file runs: the stage's composition, the bus and store clients,
# and its models (the embedder embeds; the navigator's ranking models load; Gemini's client
# imports where a stage may be configured with it). None of the fitting libraries is there.
INSTALLED_PROBE = r"""
import importlib, importlib.util, sys
stage = sys.argv[1]
importlib.import_module(f"services.{stage}.main")
importlib.import_module(f"services.{stage}.bootstrap")
import shared.adapters.kafka.runner, shared.adapters.mongo  # noqa: E401
if stage != "gateway":
    from shared.adapters.embeddings import make_embedder
    from shared.settings import Settings
    assert make_embedder(Settings()).embed(["a page of text"]).shape[0] == 1
    import shared.adapters.llm.gemini  # noqa: F401
if stage == "navigator":
    from services.navigator.models import configured_models
    configured_models(Settings())
absent = [m for m in ("sklearn", "scipy", "fpdf") if importlib.util.find_spec(m) is not None]
assert not absent, f"installed though no stage needs them: {absent}"
print("ok")
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from bench.install_size import install_lock

    root = tmp_path_factory.mktemp("images")
    return {lock: install_lock(lock, root / lock) for lock in ("stage", "gateway")}


@pytest.mark.integration
@pytest.mark.parametrize("stage", [*QUERY_AND_INDEX_STAGES, "gateway"])
def test_a_stage_runs_on_what_its_image_installs(stage: str, installed: dict[str, Path], tmp_path: Path) -> None:
    _copy_stage(stage, tmp_path)
    python = installed["gateway" if stage == "gateway" else "stage"]
    result = subprocess.run(
        [str(python), "-c", INSTALLED_PROBE, stage], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HOME": str(tmp_path),
             "TREERAG_METRICS_DIR": str(tmp_path / "m")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
