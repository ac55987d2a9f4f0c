"""Reorder the fused ranking's best pages with a cross-encoder (`TREERAG_RERANKER`; loaded by
`services/navigator/models.py`).

A cross-encoder reads the question and a passage together, so it tells the page that answers
from its neighbour that only shares the words, where page-level features cannot. It is slow
(a transformer run per pair), so it reads one window of each of the `depth` best pages: the
`window_words`-word window holding the largest IDF-weighted share of the question's terms.
Each of those pages then scores

    log(fused score relative to the best) + weight * sigmoid(cross-encoder logit)

and the pages below keep their order under them. Whether the documents answer is decided again
with the cross-encoder's view: a logistic model over the fused ranking's log-odds of answering
and the best logit of the five pages (a question no page is about gets a very low one). The
weight, that model and its threshold are fitted (`treerag.evaluation.rerank_fit`) on the same
labelled and off-topic questions as the ranking model, for one reranker by name;
`rerank.json` holds the shipped ones (`make fit-reranker`).
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from services.navigator.ranking.features import CandidateSet
from services.navigator.ranking.fused import FusedRanking
from services.navigator.ranking.model import LinearModel, read_model_file
from shared.ports.model_roles import PassageScorer
from shared.text.lexical import terms

logger = logging.getLogger(__name__)

RERANK_MODEL_PATH = Path(__file__).with_name("rerank.json")
# Pages read by the cross-encoder per question, and the words of each page's window: fixed in
# advance as a cost bound (five pairs of a question and 120 words: about 1 s of CPU on the
# machine measured, docs/querying.md); 8 or 10 pages measured no better.
DEPTH = 5
WINDOW_WORDS = 120
# What the answer decision reads once a reranker is configured.
RERANK_ABSTENTION_FEATURES = ("answer_log_odds", "best_relevance_logit")
# Logits kept per process: a question asked again costs no model run.
_MEMO_SIZE = 4096


class RerankModel(BaseModel):
    scorer: str  # the `PassageScorer.name` the weight was fitted with
    weight: float = Field(ge=0.0)
    depth: int = Field(default=DEPTH, ge=1)
    window_words: int = Field(default=WINDOW_WORDS, ge=8)
    # P(the documents answer) from RERANK_ABSTENTION_FEATURES, and the probability at which they
    # are taken to; None: the fused ranking's own decision stands.
    abstention: LinearModel | None = None
    answer_threshold: float | None = None
    fitted_on: dict[str, str | int | float] = {}

    def to_json(self) -> str:
        return self.model_dump_json(indent=1) + "\n"


@dataclass(frozen=True)
class Reranking:
    scorer: PassageScorer
    model: RerankModel


def windows(text: str, size: int) -> list[str]:
    """The page's windows of `size` words, each starting half a window after the previous."""
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)]
    step = max(1, size // 2)
    return [" ".join(words[start:start + size]) for start in range(0, len(words) - size + step, step)]


def best_window(text: str, weights: dict[str, float], size: int = WINDOW_WORDS) -> str:
    """The window holding the largest IDF-weighted share of the question's terms (the first of
    equals)."""
    best, best_weight = "", -1.0
    for window in windows(text, size):
        found = set(terms(window))
        weight = sum(w for t, w in weights.items() if t in found)
        if weight > best_weight:
            best, best_weight = window, weight
    return best


_memo: OrderedDict[tuple[str, str, str], float] = OrderedDict()
_memo_lock = threading.Lock()  # the navigator answers queries on several threads


def _logits(scorer: PassageScorer, question: str, passages: list[str]) -> list[float]:
    keys = [(scorer.name, question, passage) for passage in passages]
    with _memo_lock:
        known = {k: _memo[k] for k in keys if k in _memo}
    missing = sorted({k for k in keys if k not in known})
    if missing:
        known |= dict(zip(missing, scorer.score(question, [k[2] for k in missing]), strict=True))
        with _memo_lock:
            for key in missing:
                _memo[key] = known[key]
            while len(_memo) > _MEMO_SIZE:
                _memo.popitem(last=False)
    return [known[k] for k in keys]


def relevance(
    ranking: FusedRanking, candidates: CandidateSet, scorer: PassageScorer, depth: int, window_words: int
) -> tuple[np.ndarray, np.ndarray]:
    """For the `depth` best pages: their fused scores relative to the best (logs) and the
    cross-encoder's logits of their best windows."""
    top = ranking.pages[:depth]
    passages = []
    for ranked in top:
        evidence = candidates.documents[ranked.document]
        passages.append(best_window(evidence.index.pages[ranked.page - 1], evidence.weights, window_words))
    logits = np.array(_logits(scorer, candidates.question, passages), dtype=float)
    fused = np.log(np.maximum([p.score for p in top], 1e-300))
    return fused, logits


def sigmoid(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-logits))


def abstention_row(answer_probability: float, logits: np.ndarray) -> np.ndarray:
    """RERANK_ABSTENTION_FEATURES of one question."""
    p = min(max(answer_probability, 1e-6), 1.0 - 1e-6)
    return np.array([math.log(p / (1.0 - p)), float(logits.max())])


def rerank(ranking: FusedRanking, candidates: CandidateSet, reranking: Reranking) -> FusedRanking:
    """The ranking with its `depth` best pages reordered (ties keep the fused order) and the
    pages below in their order, scores still exp(score - best score); and, when the reranking
    model has one, the answer decision made again with the cross-encoder's best logit."""
    model = reranking.model
    if not ranking.pages:
        return ranking
    fused, logits = relevance(ranking, candidates, reranking.scorer, model.depth, model.window_words)
    if model.abstention is not None and model.answer_threshold is not None:
        probability = float(model.abstention.probability(abstention_row(ranking.answer_probability, logits)[None, :])[0])
        ranking = replace(ranking, answer_probability=probability, answerable=probability >= model.answer_threshold)
    if model.weight == 0:
        return ranking
    relevant = sigmoid(logits)
    combined = fused + model.weight * relevant
    head = len(combined)
    # Every lower page gets the head's lowest relevance: it cannot pass a page of the head,
    # whose fused score and relevance are both at least as high.
    floor = model.weight * float(relevant.min())
    rest = [math.log(max(p.score, 1e-300)) + floor for p in ranking.pages[head:]]
    order = sorted(range(head), key=lambda i: -combined[i])  # stable: ties keep the fused order
    scores = [float(combined[i]) for i in order] + rest
    best = max(scores)
    pages = [ranking.pages[i] for i in order] + ranking.pages[head:]
    return replace(ranking, pages=[replace(p, score=math.exp(s - best)) for p, s in zip(pages, scores, strict=True)])


@lru_cache(maxsize=4)
def load_rerank_model(path: Path = RERANK_MODEL_PATH) -> RerankModel:
    return read_model_file(RerankModel, path, "make fit-reranker")


def reranking_identity(reranking: Reranking | None) -> str:
    """What the answer-cache key adds for `reranking` and its weight ("" when none reranks): a
    reranked ranking can cite other pages, so its answers are cached apart."""
    return "" if reranking is None else f"+rerank:{reranking.scorer.name}@{reranking.model.weight:g}"
