"""Off-topic abstention: questions of one collection asked of the documents of another.

A question written for one document set (R manuals) asked of an unrelated document (a 10-K, a
watch manual) has no answer there; the product must say "Not found in the documents." rather
than quote the closest sentence. The same run checks the opposite error: answerable questions
asked of their own document that wrongly abstain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from services.navigator.index import DocumentIndex
from shared.model.query import QuerySettings
from treerag.evaluation.dataset import QAItem
from treerag.pipeline import answer_from_indexes


class DirectionScores(BaseModel):
    """Questions of `questions_from` asked of each document of `documents_from`."""

    questions_from: str
    documents_from: str
    pairs: int
    abstained: int
    share_abstained: float
    # Mean confidence of the off-topic answers that were not abstentions (how loudly it guesses).
    answered_confidence_mean: float | None


class AbstentionReport(BaseModel):
    off_topic_pairs: int
    off_topic_abstained: int
    off_topic_share_abstained: float
    directions: list[DirectionScores]
    answerable_questions: int
    answerable_wrongly_abstained: int
    answerable_share_wrongly_abstained: float
    wrongly_abstained_ids: list[str]
    # Mean confidence of the answers to answerable questions, beside the off-topic answers'.
    answerable_confidence_mean: float | None


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def off_topic_abstention(
    collections: Mapping[str, Sequence[QAItem]],
    indexes: Mapping[str, DocumentIndex],
    settings: QuerySettings | None = None,
) -> AbstentionReport:
    """Ask every question of every document named by the *other* collections (one document at a
    time, as `treerag ask --doc`), and every answerable question of its own document.

    `collections` maps a collection name to its questions; `indexes` maps a file name to its
    index. Deterministic: the pipeline is."""
    settings = settings or QuerySettings()
    documents = {name: sorted({item.doc for item in items}) for name, items in collections.items()}
    missing = sorted({d for docs in documents.values() for d in docs} - set(indexes))
    if missing:
        raise KeyError(f"no index for {', '.join(missing)}; index these documents first")
    directions: list[DirectionScores] = []
    for source in sorted(collections):
        for target in sorted(collections):
            if target == source:
                continue
            abstained, confidences, pairs = 0, [], 0
            for item in collections[source]:
                for doc in documents[target]:
                    answer = answer_from_indexes(item.question, [indexes[doc]], settings).answer
                    pairs += 1
                    if answer.abstained:
                        abstained += 1
                    else:
                        confidences.append(answer.confidence)
            directions.append(
                DirectionScores(
                    questions_from=source, documents_from=target, pairs=pairs, abstained=abstained,
                    share_abstained=_share(abstained, pairs),
                    answered_confidence_mean=round(sum(confidences) / len(confidences), 4) if confidences else None,
                )
            )
    wrong: list[str] = []
    confidences = []
    answerable = [item for name in sorted(collections) for item in collections[name] if item.answerable]
    for item in answerable:
        answer = answer_from_indexes(item.question, [indexes[item.doc]], settings).answer
        if answer.abstained:
            wrong.append(item.id)
        else:
            confidences.append(answer.confidence)
    pairs = sum(d.pairs for d in directions)
    abstained = sum(d.abstained for d in directions)
    return AbstentionReport(
        off_topic_pairs=pairs,
        off_topic_abstained=abstained,
        off_topic_share_abstained=_share(abstained, pairs),
        directions=directions,
        answerable_questions=len(answerable),
        answerable_wrongly_abstained=len(wrong),
        answerable_share_wrongly_abstained=_share(len(wrong), len(answerable)),
        wrongly_abstained_ids=wrong,
        answerable_confidence_mean=round(sum(confidences) / len(confidences), 4) if confidences else None,
    )
