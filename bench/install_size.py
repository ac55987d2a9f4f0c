"""What each stage's image installs: the lock file it is built from, installed into a fresh
virtual environment, and the megabytes that adds to an empty one.

    python -m bench.install_size [--work DIR]

Before the extras, every image installed all of the project's dependencies (what
`requirements/all.lock` holds: the gateway's, Gemini's, the fitting and the demo libraries);
now the gateway's image installs `requirements/gateway.lock` and the other four stages'
`requirements/stage.lock`. The Debian packages an image adds (Tesseract in the indexer's) and
Python itself are the same before and after and not counted. Writes
bench/results/install_size.json.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, write_result

logger = logging.getLogger("bench.install_size")
REPO = Path(__file__).resolve().parents[1]
LOCKS = REPO / "requirements"
IMAGES = {"before: every image": "all", "gateway": "gateway", "indexer, navigator, compressor, verifier": "stage"}


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def fresh_venv(venv: Path) -> Path:
    """A new virtual environment at `venv`; its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    return venv / "bin" / "python"


def install_lock(lock: str, venv: Path) -> Path:
    """requirements/<lock>.lock into a new virtual environment at `venv`, each file checked
    against its hash and nothing resolved again; its interpreter."""
    python = fresh_venv(venv)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--require-hashes", "--no-deps",
                    "-r", str(LOCKS / f"{lock}.lock")], check=True)
    return python


def packages(python: Path) -> list[str]:
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze", "--exclude", "pip"],
                            capture_output=True, text=True, check=True).stdout
    return sorted(line.split("==")[0].lower() for line in listed.splitlines() if line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "treerag-install-size")
    args = parser.parse_args(argv)
    configure_bench_logging()
    fresh_venv(args.work / "empty")
    empty = folder_bytes(site_packages(args.work / "empty"))
    images: dict[str, Any] = {}
    for image, lock in IMAGES.items():
        python = install_lock(lock, args.work / lock)
        added = folder_bytes(site_packages(args.work / lock)) - empty
        names = packages(python)
        images[image] = {"lock": f"requirements/{lock}.lock", "installed_mb": round(added / 1e6, 1),
                         "packages": len(names), "has": names}
        logger.info("%s (%s.lock): %.1f MB in %d packages", image, lock, added / 1e6, len(names))
    before = images["before: every image"]["has"]
    for row in images.values():
        row["left_out"] = sorted(set(before) - set(row["has"]))
    write_result("install_size", {"images": images})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
