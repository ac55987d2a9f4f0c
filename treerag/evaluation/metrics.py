"""Per-question metrics and their aggregation into one system's row of RESULTS.json."""

from __future__ import annotations

import statistics

from pydantic import BaseModel, Field

from shared.model.query import Citation, VerifiedAnswer
from shared.text.citations import strip_citations
from shared.text.normalize import tokenize
from treerag.evaluation.dataset import QAItem


class ItemScore(BaseModel):
    id: str
    answerable: bool
    abstained: bool
    cited_pages: list[int]
    answer: str = Field(default="", description="The answer as `treerag ask` prints it.")
    citations: list[Citation] = Field(default_factory=list)
    hit_at_1: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    answer_f1: float = 0.0
    rouge_l: float = 0.0
    context_tokens: int = 0
    latency_ms: float = 0.0


class SystemScores(BaseModel):
    hit_at_1: float
    evidence_page_precision: float
    evidence_page_recall: float
    answer_f1: float
    rouge_l: float
    abstention_accuracy: float | None
    context_tokens_mean: float
    latency_ms_p50: float
    latency_ms_p95: float


def _overlap(prediction: str, reference: str) -> tuple[int, int, int]:
    """(tokens in common, counted at most as often as in each; prediction tokens; reference tokens)."""
    pred, ref = tokenize(prediction), tokenize(reference)
    ref_counts: dict[str, int] = {}
    for t in ref:
        ref_counts[t] = ref_counts.get(t, 0) + 1
    common: dict[str, int] = {}
    overlap = 0
    for t in pred:
        if ref_counts.get(t, 0) > common.get(t, 0):
            common[t] = common.get(t, 0) + 1
            overlap += 1
    return overlap, len(pred), len(ref)


def token_f1(prediction: str, reference: str) -> float:
    overlap, n_pred, n_ref = _overlap(prediction, reference)
    if overlap == 0:
        return 0.0
    precision, recall = overlap / n_pred, overlap / n_ref
    return 2 * precision * recall / (precision + recall)


def token_recall(prediction: str, reference: str) -> float:
    """Share of the reference's tokens the prediction holds."""
    overlap, _, n_ref = _overlap(prediction, reference)
    return overlap / n_ref if n_ref else 0.0


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F1 over word tokens (longest common subsequence)."""
    pred, ref = tokenize(prediction), tokenize(reference)
    if not pred or not ref:
        return 0.0
    previous = [0] * (len(ref) + 1)
    for p in pred:
        current = [0]
        for j, r in enumerate(ref, start=1):
            current.append(previous[j - 1] + 1 if p == r else max(previous[j], current[j - 1]))
        previous = current
    lcs = previous[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(pred), lcs / len(ref)
    return 2 * precision * recall / (precision + recall)


def cited_pages(answer: VerifiedAnswer, doc_id: str | None = None) -> list[int]:
    """Cited pages in answer order (first citation first), without repeats."""
    pages: list[int] = []
    for citation in answer.citations:
        if doc_id is None or citation.doc_id == doc_id:
            pages.extend(p for p in citation.pages if p not in pages)
    return pages


def score_item(
    item: QAItem, answer: VerifiedAnswer, context_tokens: int, latency_ms: float, doc_id: str | None = None
) -> ItemScore:
    pages = [] if answer.abstained else cited_pages(answer, doc_id)
    score = ItemScore(
        id=item.id, answerable=item.answerable, abstained=answer.abstained, cited_pages=pages,
        answer=answer.answer, citations=list(answer.citations),
        context_tokens=context_tokens, latency_ms=round(latency_ms, 3),
    )
    if item.answerable:
        gold = set(item.evidence_pages)
        if pages:
            score.hit_at_1 = float(pages[0] in gold)
            score.precision = sum(p in gold for p in pages) / len(pages)
            score.recall = sum(p in set(pages) for p in gold) / len(gold) if gold else 0.0
        text = "" if answer.abstained else strip_citations(answer.answer)
        score.answer_f1 = round(token_f1(text, item.answer), 4)
        score.rouge_l = round(rouge_l(text, item.answer), 4)
    return score


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    lo = int(position)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (position - lo)


def aggregate(scores: list[ItemScore]) -> SystemScores:
    answerable = [s for s in scores if s.answerable]
    unanswerable = [s for s in scores if not s.answerable]

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 4) if values else 0.0

    return SystemScores(
        hit_at_1=mean([s.hit_at_1 for s in answerable]),
        evidence_page_precision=mean([s.precision for s in answerable]),
        evidence_page_recall=mean([s.recall for s in answerable]),
        answer_f1=mean([s.answer_f1 for s in answerable]),
        rouge_l=mean([s.rouge_l for s in answerable]),
        abstention_accuracy=mean([float(s.abstained) for s in unanswerable]) if unanswerable else None,
        context_tokens_mean=round(statistics.fmean([s.context_tokens for s in scores]), 1) if scores else 0.0,
        latency_ms_p50=round(_percentile([s.latency_ms for s in scores], 0.5), 3),
        latency_ms_p95=round(_percentile([s.latency_ms for s in scores], 0.95), 3),
    )
