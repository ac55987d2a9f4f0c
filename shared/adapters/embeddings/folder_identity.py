"""The name of a model read from a local folder: its folder name and a digest of its files.

Stored vectors are matched to the model that made them by name, so two folders that hold
different weights under the same folder name (a packaged model's folder is often just `model`)
must not share one, and the same files copied elsewhere must keep it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_CHUNK = 1 << 20


def folder_model_name(folder: Path) -> str:
    """`<folder name>@<12 hex digits>`: the digest covers every file's relative path and bytes
    (reading the weights once costs well under a second for models of a few hundred MB)."""
    resolved = Path(folder).resolve()
    digest = hashlib.sha256()
    for path in sorted(p for p in resolved.rglob("*") if p.is_file()):
        relative = path.relative_to(resolved).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue  # version-control and editor files do not change the model
        digest.update(relative.encode() + b"\0")
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        digest.update(b"\0")
    return f"{resolved.name}@{digest.hexdigest()[:12]}"
