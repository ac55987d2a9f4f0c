"""Checking sentences against the pages they cite: one rule for the verifier's answers, the
gateway's `POST /v1/verify` and `treerag verify`.

A sentence citing several pages is checked against each (`shared/text/grounding.py`) and keeps
its best verdict: supported before contradicted before unsupported, then the higher score.

An optional entailment model (`TREERAG_NLI`) is asked only about what the lexical check cannot
settle: a sentence without a failed check whose window covers it in part (a paraphrase) becomes
supported when the model finds the window entails it; a failed check stays a veto, and the
model's contradiction probability is added to its reason as confirmation.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.model.query import Citation, EvidenceWindow, SentenceCheck
from shared.model.sources import SourcePage
from shared.ports.model_roles import EntailmentJudge
from shared.text.citations import strip_citations
from shared.text.grounding import (
    CONTRADICTED,
    SUPPORTED,
    UNSUPPORTED,
    Grounding,
    GroundingFit,
    default_fit,
    ground,
)
from shared.text.lexical import sentences_of
from shared.text.substitution import WordVectors

_VERDICT_RANK = {SUPPORTED: 2, CONTRADICTED: 1}


def _better(a: Grounding, b: Grounding) -> bool:
    return (_VERDICT_RANK.get(a.verdict, 0), a.score) > (_VERDICT_RANK.get(b.verdict, 0), b.score)


_VETOES = ("number_missing", "name_missing", "polarity_conflict")


def _with_judge(sentence: str, result: Grounding, judge: EntailmentJudge,
                words: WordVectors | None) -> tuple[str, str]:
    """(verdict, reason) once the entailment model has been asked, when it has anything to add."""
    vetoed = any(result.features.get(v) for v in _VETOES)
    if vetoed:
        contradiction = judge.judge(result.window, sentence).get("contradiction", 0.0)
        return result.verdict, f"{result.reason} (entailment model: contradiction {contradiction:.2f})"
    if result.verdict == UNSUPPORTED and result.features.get("coverage", 0.0) >= _fit(words).contradiction_coverage:
        probabilities = judge.judge(result.window, sentence)
        if max(probabilities, key=lambda k: probabilities[k]) == "entailment":
            return SUPPORTED, f"entailed by the window per the entailment model ({probabilities['entailment']:.2f})"
    return result.verdict, result.reason


def _fit(words: WordVectors | None) -> GroundingFit:
    return default_fit(words.name if words else None)


def check_sentence(sentence: str, citation: Citation | None, sources: Sequence[SourcePage],
                   judge: EntailmentJudge | None = None, words: WordVectors | None = None) -> SentenceCheck:
    """The sentence's verdict against the best of its sources, with the evidence window.
    `words`: the embedder's word vectors, which tell a replaced word's distance to the page's."""
    best: tuple[Grounding, SourcePage] | None = None
    fit = _fit(words)
    for source in sources:
        result = ground(sentence, source.text, fit, words)
        if best is None or _better(result, best[0]):
            best = (result, source)
    cited = float(citation is not None)
    if best is None:
        return SentenceCheck(text=sentence, citation=citation, signals={"citation": cited}, score=0.0,
                             grounded=False, verdict="unsupported", reason="no source text to check against")
    result, source = best
    verdict, reason = _with_judge(sentence, result, judge, words) if judge and result.window else (result.verdict, result.reason)
    # The window as the page prints it (the check reads it with quotes and dashes folded).
    shown = " ".join(source.text[result.start:result.end].split()) or result.window
    window = EvidenceWindow(doc_id=source.doc_id, page=source.page, start=result.start, end=result.end,
                            text=shown) if result.window else None
    return SentenceCheck(
        text=sentence,
        citation=citation,
        signals={"citation": cited, **result.features},
        score=result.score,
        grounded=verdict == SUPPORTED,
        verdict=verdict,
        reason=reason,
        window=window,
    )


def verify_text(text: str, sources: Sequence[SourcePage], judge: EntailmentJudge | None = None,
                words: WordVectors | None = None) -> list[SentenceCheck]:
    """Every sentence of `text` (inline citation marks removed) checked against `sources`."""
    checks = []
    for sentence in sentences_of(text):
        plain = strip_citations(sentence)
        if plain:
            checks.append(check_sentence(plain, None, sources, judge, words))
    return checks


def answer_confidence(checks: Sequence[SentenceCheck]) -> float:
    """Mean sentence score, a contradicted sentence counting zero."""
    if not checks:
        return 0.0
    return round(sum(0.0 if c.verdict == CONTRADICTED else c.score for c in checks) / len(checks), 4)
