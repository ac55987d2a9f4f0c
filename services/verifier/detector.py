"""Hallucination detector: every answer sentence checked against the page text it cites.

The check itself (layout windows, coverage, the number, name and polarity checks, the fitted
score and the verdict) is `shared/text/grounding.py`, applied to a sentence's cited pages by
`shared/app/verification.py` (the same rule serves the gateway's `/v1/verify`). Here an
answer's verdicts become its confidence and warnings. Citation presence alone never grounds
a sentence: an uncited sentence is checked against the whole context like any other.
"""

from __future__ import annotations

from shared.app.verification import SourcePage, answer_confidence, check_sentence
from shared.model.query import SentenceCheck
from shared.text.grounding import CONTRADICTED

__all__ = ["ABSTENTION", "SourcePage", "check_sentence", "overall"]

LOW_CONFIDENCE = 0.6
WEAK_SHARE = 0.7
ABSTENTION = "Not found in the documents."


def overall(checks: list[SentenceCheck]) -> tuple[float, list[str]]:
    """Confidence (mean sentence score, a contradicted sentence counting zero) and warnings."""
    if not checks:
        return 0.0, []
    confidence = answer_confidence(checks)
    warnings = []
    if confidence < LOW_CONFIDENCE:
        warnings.append(f"low confidence {confidence:.2f} (< {LOW_CONFIDENCE}): check the cited pages")
    contradicted = [c for c in checks if c.verdict == CONTRADICTED]
    for c in contradicted:
        warnings.append(f"contradicted by its cited page: \"{_short(c.text)}\" ({c.reason})")
    weak = sum(not c.grounded for c in checks)
    if weak / len(checks) > WEAK_SHARE:
        warnings.append(f"{weak} of {len(checks)} sentences are not supported by their cited pages")
    return confidence, warnings


def _short(text: str, words: int = 12) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")
