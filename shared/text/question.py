"""What a question asks for, beyond its bag of words.

- *Answer-type words*: in "how many", "how long", "how often" the adjective names the kind of
  answer (a quantity), not the topic; matching it against text ("a long vector", "many
  packages") rewards the wrong sentences, so they are removed from the topic terms.
- *Answer instructions*: a sentence after the question that only says how to write the answer
  ("Answer in millions.", "Give the answer as a whole integer.", "Round to one decimal.")
  names no topic; its words are absent from the documents and would count as missing evidence
  (and pull the question's embedding away from its topic), so it is not part of the topic.
- *Page references*: "on page fourteen", "the last page", "the cover" say where to look, not
  what about (`page_references.py` resolves them); "fourteen" or "cover" on no page would count
  as missing evidence, so they are not part of the topic either.
- *Asked scale and quantity*: "Answer in USD millions" says at which scale a figure is wanted
  (`asked_scale`); "how much", "how many", an asked scale, a rounding instruction, a ratio or a percentage say
  that the answer is a quantity (`asks_for_quantity`).
- *Statement questions*: a yes/no question, a "which" question (a choice) and a definition
  ("What is a tibble?", "What does --vanilla do?") are answered by the sentence that states it,
  whole (`asks_for_statement`).
- *Literals*: command-line options and dotted names ("-x", "--no-cache", ".config") lose their
  punctuation in tokenisation, which turns ".config" into the common word "config"; matched
  verbatim, they are the most specific evidence a technical question carries.
"""

from __future__ import annotations

import re
from functools import lru_cache

from shared.text.page_references import without_page_mentions

_HOW_QUANTITY = re.compile(
    r"\bhow\s+(many|much|long|often|far|old|large|big|small|fast|soon|frequently|tall|wide|high|deep)\b",
    re.IGNORECASE,
)
# A sentence boundary followed by a further sentence of the question.
_SENTENCE_BREAK = re.compile(r"(?<=[?.!])\s*(?=[A-Z])")
# A sentence that tells how to give the answer: an imperative (or "please") about the answer or
# its form, never a sentence that asks for something else.
_ANSWER_INSTRUCTION = re.compile(
    r"^(?:please\s+)?(?:answer|write|give|provide|express|round|respond|return|report|present|format|output)\b"
    r"(?=.*\b(?:answer|format|decimals?|decimal places?|round(?:ed)?|integer|float|millions?|billions?|"
    r"thousands?|percent(?:age)?)\b)",
    re.IGNORECASE,
)
# "Answer in USD millions", "(in USD billions)", "in millions of dollars".
_ASKED_SCALE = re.compile(r"\bin\s+(?:(?:USD|US\$|\$)\s*)?(thousands|millions|billions)\b", re.IGNORECASE)
_SCALE_OF = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
_QUANTITY = re.compile(
    r"\bhow\s+(?:much|many)\b|\bround(?:ed)?\b.*\bdecimal|\bin\s+units\s+of\b|\bwhat\s+(?:is|was|were|are)\s+"
    r"(?:the\s+)?(?:total\s+)?(?:amount|value|number|sum)\b|\bratio\b|%|\bpercent(?:age)?\b|\bcagr\b",
    re.IGNORECASE,
)
_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.IGNORECASE
)
_WHICH = re.compile(r"\bwhich\b", re.IGNORECASE)
_DEFINITION = re.compile(
    r"^\s*(?:what\s+(?:is|are|does|do)\b|define\b|describe\b|explain\b|who\s+(?:is|are|was|were)\b)", re.IGNORECASE
)
# An option ("-x", "--no-cache") or a name starting with a dot (".config", ".env").
_LITERAL = re.compile(r"(?<![\w.\-])(--?[A-Za-z][\w\-]*|\.[A-Za-z][\w.]*)")


@lru_cache(maxsize=4096)
def asked_text(question: str) -> str:
    """The question without the sentences after it that only instruct how to write the answer."""
    sentences = _SENTENCE_BREAK.split(question.strip())
    # A sentence that ends in a question mark asks something, whatever its lead-in says
    # ("Please answer the following question: what is ...?").
    kept = sentences[:1] + [
        s for s in sentences[1:] if s.strip().endswith("?") or not _ANSWER_INSTRUCTION.search(s.strip())
    ]
    return " ".join(kept)


@lru_cache(maxsize=4096)
def topic_text(question: str) -> str:
    """The question without its answer instructions, answer-type words ("how many" -> "how")
    and the words that name a page ("on page 14")."""
    return _HOW_QUANTITY.sub("how", without_page_mentions(asked_text(question)))


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


def asked_scale(question: str) -> float | None:
    """The scale the question wants a figure at (1e6 for "Answer in USD millions"), or None."""
    found = _ASKED_SCALE.search(question)
    return _SCALE_OF[found.group(1).lower()] if found else None


def asks_for_quantity(question: str) -> bool:
    """Whether the answer is a quantity: "how much", "how many", a scale, a rounding, a ratio
    or a percentage asked."""
    return asked_scale(question) is not None or bool(_QUANTITY.search(question))


def is_yes_no(question: str) -> bool:
    """Whether the question (its asked part) opens as a yes/no question does."""
    return bool(_YES_NO.match(asked_text(question)))


def is_which(question: str) -> bool:
    """Whether the question asks to choose ("Which segment grew most?")."""
    return bool(_WHICH.search(asked_text(question)))


def asks_for_statement(question: str) -> bool:
    """Whether the answer is a sentence stating it, whole: a yes/no, a "which" question, or a
    definition ("What is ...?", "Describe ...") that asks for no quantity."""
    if is_yes_no(question) or is_which(question):
        return True
    return bool(_DEFINITION.match(asked_text(question))) and not asks_for_quantity(question)
