"""Checking sentences against the pages they cite: one rule for the verifier's answers, the
gateway's `POST /v1/verify` and `treerag verify`.

A sentence citing several pages is checked against each (`shared/text/grounding.py`) and keeps
its best verdict: supported before contradicted before unsupported, then the higher score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.model.query import Citation, EvidenceWindow, SentenceCheck
from shared.text.citations import strip_citations
from shared.text.grounding import CONTRADICTED, SUPPORTED, Grounding, ground
from shared.text.lexical import sentences_of

_VERDICT_RANK = {SUPPORTED: 2, CONTRADICTED: 1}


@dataclass(frozen=True)
class SourcePage:
    """Text a sentence is checked against: a page of a document, or the context (page 0)."""

    doc_id: str
    page: int
    text: str


def _better(a: Grounding, b: Grounding) -> bool:
    return (_VERDICT_RANK.get(a.verdict, 0), a.score) > (_VERDICT_RANK.get(b.verdict, 0), b.score)


def check_sentence(sentence: str, citation: Citation | None, sources: Sequence[SourcePage]) -> SentenceCheck:
    """The sentence's verdict against the best of its sources, with the evidence window."""
    best: tuple[Grounding, SourcePage] | None = None
    for source in sources:
        result = ground(sentence, source.text)
        if best is None or _better(result, best[0]):
            best = (result, source)
    cited = float(citation is not None)
    if best is None:
        return SentenceCheck(text=sentence, citation=citation, signals={"citation": cited}, score=0.0,
                             grounded=False, verdict="unsupported", reason="no source text to check against")
    result, source = best
    window = EvidenceWindow(doc_id=source.doc_id, page=source.page, start=result.start, end=result.end,
                            text=result.window) if result.window else None
    return SentenceCheck(
        text=sentence,
        citation=citation,
        signals={"citation": cited, **result.features},
        score=result.score,
        grounded=result.supported,
        verdict=result.verdict,  # type: ignore[arg-type]  # one of the three verdict names
        reason=result.reason,
        window=window,
    )


def verify_text(text: str, sources: Sequence[SourcePage]) -> list[SentenceCheck]:
    """Every sentence of `text` (inline citation marks removed) checked against `sources`."""
    checks = []
    for sentence in sentences_of(text):
        plain = strip_citations(sentence)
        if plain:
            checks.append(check_sentence(plain, None, sources))
    return checks


def answer_confidence(checks: Sequence[SentenceCheck]) -> float:
    """Mean sentence score, a contradicted sentence counting zero."""
    if not checks:
        return 0.0
    return round(sum(0.0 if c.verdict == CONTRADICTED else c.score for c in checks) / len(checks), 4)
