"""What an uploaded file's name may be. A name is a label shown with the document, never its
address (documents are addressed by id), so duplicates are fine; control characters are not:
they break the headers and logs the name is written into."""

from __future__ import annotations

import unicodedata

MAX_FILE_NAME_CHARS = 255
# Control characters (C0 such as NUL and LF, DEL, C1) and the Unicode line and paragraph separators.
REFUSED_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})


class FileNameError(ValueError):
    """A file name that cannot be kept as a label; the message says what to change."""


def file_name_label(raw: str | None, fallback: str) -> str:
    """The label kept for an uploaded file: the last component of `raw` (a client may send a
    path), or `fallback` when there is none."""
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    refused = sorted({c for c in name if unicodedata.category(c) in REFUSED_CATEGORIES})
    if refused:
        codes = ", ".join(f"U+{ord(c):04X}" for c in refused)
        raise FileNameError(f"the file name contains control characters ({codes}); rename the file without them")
    name = name.strip()
    if len(name) > MAX_FILE_NAME_CHARS:
        raise FileNameError(f"the file name is {len(name)} characters long; at most {MAX_FILE_NAME_CHARS} are kept")
    return name or fallback


def ascii_fallback(name: str) -> str:
    """A latin-1-safe stand-in for headers (`Content-Disposition: filename=`), also for names
    stored before control characters were refused."""
    return "".join(
        c if 32 <= ord(c) < 127 and c not in '"\\?' else "_" for c in name
    )
