"""Credentials out of what is shown: a URL's password (`mongodb://app:PASSWORD@db/`,
`kafka://user:PASSWORD@broker`) is replaced with `***` wherever the URL is quoted, so that
settings and driver errors can be logged and reported without giving the password away."""

from __future__ import annotations

import re

MASK = "***"
# scheme://user:password@ — the password runs to the last "@" before the host (a password may
# hold "@" when the URL was written unescaped) and never crosses white space or a quote.
_CREDENTIALS = re.compile(r"(?P<lead>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@'\"]*:)(?P<secret>[^\s'\"/]+)@(?=[^\s@'\"]*(?:[\s/'\"?#]|$))")


def redact(text: str) -> str:
    """`text` with the password of every URL in it replaced by `MASK`."""
    if "://" not in text:
        return text
    return _CREDENTIALS.sub(lambda m: f"{m['lead']}{MASK}@", text)
