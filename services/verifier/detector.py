"""Hallucination detector: every answer sentence checked against the page text it cites.

The check itself (layout windows, coverage, the number, name and polarity checks, the fitted
score and the verdict) is `shared/text/grounding.py`, shared with the gateway's `/v1/verify`.
Here a sentence citing several pages is checked against each and keeps its best verdict, and
an answer's verdicts become its confidence and warnings. Citation presence alone never grounds
a sentence: an uncited sentence is checked against the whole context like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.model.query import Citation, EvidenceWindow, SentenceCheck
from shared.text.grounding import CONTRADICTED, SUPPORTED, Grounding, ground

LOW_CONFIDENCE = 0.6
WEAK_SHARE = 0.7
ABSTENTION = "Not found in the documents."
_VERDICT_RANK = {SUPPORTED: 2, CONTRADICTED: 1}


@dataclass(frozen=True)
class SourcePage:
    """Text a sentence is checked against: a page of a document, or the context (page 0)."""

    doc_id: str
    page: int
    text: str


def _better(a: Grounding, b: Grounding) -> bool:
    """A supported verdict beats a contradiction, which beats missing support; then the score."""
    return (_VERDICT_RANK.get(a.verdict, 0), a.score) > (_VERDICT_RANK.get(b.verdict, 0), b.score)


def check_sentence(sentence: str, citation: Citation | None, sources: Sequence[SourcePage]) -> SentenceCheck:
    """The sentence's verdict against the best of its sources."""
    best: tuple[Grounding, SourcePage] | None = None
    for source in sources:
        result = ground(sentence, source.text)
        if best is None or _better(result, best[0]):
            best = (result, source)
    if best is None:
        return SentenceCheck(text=sentence, citation=citation, signals={"citation": float(citation is not None)},
                             score=0.0, grounded=False, verdict="unsupported", reason="no source text to check against")
    result, source = best
    window = EvidenceWindow(doc_id=source.doc_id, page=source.page, start=result.start, end=result.end,
                            text=result.window) if result.window else None
    return SentenceCheck(
        text=sentence,
        citation=citation,
        signals={"citation": float(citation is not None), **result.features},
        score=result.score,
        grounded=result.supported,
        verdict=result.verdict,  # type: ignore[arg-type]  # one of the three verdict names
        reason=result.reason,
        window=window,
    )


def overall(checks: list[SentenceCheck]) -> tuple[float, list[str]]:
    """Confidence (mean sentence score, a contradicted sentence counting zero) and warnings."""
    if not checks:
        return 0.0, []
    confidence = sum(0.0 if c.verdict == CONTRADICTED else c.score for c in checks) / len(checks)
    warnings = []
    if confidence < LOW_CONFIDENCE:
        warnings.append(f"low confidence {confidence:.2f} (< {LOW_CONFIDENCE}): check the cited pages")
    contradicted = [c for c in checks if c.verdict == CONTRADICTED]
    for c in contradicted:
        warnings.append(f"contradicted by its cited page: \"{_short(c.text)}\" ({c.reason})")
    weak = sum(not c.grounded for c in checks)
    if weak / len(checks) > WEAK_SHARE:
        warnings.append(f"{weak} of {len(checks)} sentences are not supported by their cited pages")
    return round(confidence, 4), warnings


def _short(text: str, words: int = 12) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")
