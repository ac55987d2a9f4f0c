"""What a question asks for, beyond its bag of words.

- *Answer-type words*: in "how many", "how long", "how often" the adjective names the kind of
  answer (a quantity), not the topic; matching it against text ("a long vector", "many
  packages") rewards the wrong sentences, so they are removed from the topic terms.
- *Literals*: command-line options and dotted names ("-x", "--no-cache", ".config") lose their
  punctuation in tokenisation, which turns ".config" into the common word "config"; matched
  verbatim, they are the most specific evidence a technical question carries.
"""

from __future__ import annotations

import re
from functools import lru_cache

_HOW_QUANTITY = re.compile(
    r"\bhow\s+(many|much|long|often|far|old|large|big|small|fast|soon|frequently|tall|wide|high|deep)\b",
    re.IGNORECASE,
)
# An option ("-x", "--no-cache") or a name starting with a dot (".config", ".env").
_LITERAL = re.compile(r"(?<![\w.\-])(--?[A-Za-z][\w\-]*|\.[A-Za-z][\w.]*)")


@lru_cache(maxsize=4096)
def topic_text(question: str) -> str:
    """The question without its answer-type words ("how many" -> "how")."""
    return _HOW_QUANTITY.sub("how", question)


@lru_cache(maxsize=4096)
def literals(question: str) -> tuple[str, ...]:
    """Options and dotted names in the question, as written."""
    return tuple(dict.fromkeys(m.group(1).rstrip(".-") for m in _LITERAL.finditer(question)))


@lru_cache(maxsize=4096)
def literal_pattern(literal: str) -> re.Pattern[str]:
    """Matches `literal` as a whole token (not inside a longer option or word)."""
    return re.compile(rf"(?<![\w.\-]){re.escape(literal)}(?![\w\-])")


def literal_share(found_in: str, wanted: tuple[str, ...]) -> float:
    """Share of the literals that occur verbatim in `found_in`."""
    if not wanted:
        return 0.0
    # The substring test is a cheap necessary condition: most pages quote no literal at all.
    return sum(1 for lit in wanted if lit in found_in and literal_pattern(lit).search(found_in)) / len(wanted)
