"""Organisation names: the legal form that ends one, and the name people write in its place.

A cover prints "THE BOEING COMPANY" or "PepsiCo, Inc."; a question says "Boeing" or "PepsiCo".
"""

from __future__ import annotations

import re

# Words that end an organisation's legal name, in the languages a cover is likely written in.
LEGAL_FORM = (
    r"(?:(?:Inc|Corp|Co|Ltd|L\.L\.C|L\.P|N\.V|S\.A|S\.p\.A|B\.V|K\.K|Pty)\.?"
    r"|(?:Incorporated|Corporation|Company|Limited|LLC|LLP|LP|plc|PLC|SE|AG|GmbH|Group|Holdings)(?!\w))"
)
_TRAILING_FORM = re.compile(rf"[\s,]+{LEGAL_FORM}\s*$", re.IGNORECASE)
_LEADING_ARTICLE = re.compile(r"^the\s+", re.IGNORECASE)
# A word this short set in capitals is an acronym ("MGM", "IBM"), kept as it is.
_ACRONYM_LENGTH = 3


def common_name(legal_name: str) -> str:
    """The name as people write it: without a leading "The" and the trailing legal forms, and
    in title case when the cover sets it in capitals ("THE BOEING COMPANY" -> "Boeing")."""
    name = _LEADING_ARTICLE.sub("", " ".join(legal_name.split()))
    while (shorter := _TRAILING_FORM.sub("", name).strip(" ,")) != name and shorter:
        name = shorter
    if name.isupper():
        name = " ".join(w if len(w) <= _ACRONYM_LENGTH else w.capitalize() for w in name.split())
    return name
