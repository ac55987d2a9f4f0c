"""Which files a command takes from the paths it is given."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from shared.model.formats import EXTENSIONS

# The file types the indexer reads, by suffix (compared without case).
INDEXABLE_SUFFIXES = tuple(EXTENSIONS)


def is_indexable(path: Path) -> bool:
    return path.suffix.lower() in INDEXABLE_SUFFIXES


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files named are taken as given (a bad one is then reported, not skipped unseen); folders
    are walked recursively for indexable files, hidden entries left out, in path order. A file
    reached twice is listed once."""
    found: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            inside = sorted(
                p for p in path.rglob("*")
                if p.is_file() and is_indexable(p) and not _hidden(p.relative_to(path))
            )
        else:
            inside = [path]
        for file in inside:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)
