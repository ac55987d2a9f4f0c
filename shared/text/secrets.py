"""Credentials out of what is shown: a URL's password (`mongodb://app:PASSWORD@db/`,
`kafka://user:PASSWORD@broker`) is replaced with `***` wherever the URL is quoted, so that
settings and driver errors can be logged and reported without giving the password away."""

from __future__ import annotations

import re

MASK = "***"
# After a scheme's "://": user:password@ — the password runs to the last "@" before the host (a
# password may hold "@" when the URL was written unescaped) and never crosses white space, a
# quote or a slash. Matched only where a "://" is, so a long line costs one scan.
_USERINFO = re.compile(r"(?P<user>[^\s/:@'\"]*:)(?P<secret>[^\s'\"/]+)@(?=[^\s@'\"]*(?:[\s/'\"?#]|$))")


def redact(text: str) -> str:
    """`text` with the password of every URL in it replaced by `MASK`."""
    at = text.find("://")
    if at < 0:
        return text
    out: list[str] = []
    done = 0
    while at >= 0:
        start = at + 3
        found = _USERINFO.match(text, start) if at > 0 and text[at - 1].isalnum() else None
        if found:
            out.append(text[done:start])
            out.append(f"{found['user']}{MASK}@")
            done = found.end()
        at = text.find("://", max(start, done))
    out.append(text[done:])
    return "".join(out)
