"""How well a document's card (`shared/model/card.py`) matches what a question names: the
issuer, title or subject it names, and the period it asks about.

A shared store holds many filings of one company, each the same kind of text; what tells them
apart is on the card: whose document it is and which fiscal year and quarter it reports. These
are routing features (`routing.py`), fitted with the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import PurePath

import numpy as np

from services.navigator.index import DocumentIndex
from shared.model.card import DocumentCard, DocumentPeriod
from shared.text.lexical import bm25_idf, terms
from shared.text.periods import question_period

# An asked year a document reports only as a comparative (a 10-K shows two or three years).
COMPARATIVE_YEAR = 0.5


def card_terms(index: DocumentIndex) -> frozenset[str]:
    """The index terms of what the card says the document is, and of its file name."""

    def build() -> frozenset[str]:
        card = index.record.card
        words = [PurePath(index.record.file_name).stem.replace("_", " ").replace("-", " ")]
        if card is not None:
            words += [card.title, card.issuer, card.subject]
        return frozenset(terms(" ".join(words)))

    return index.derive("card_terms", build)


def identity_match(indexes: Sequence[DocumentIndex], qterms: Sequence[str]) -> np.ndarray:
    """Per document: the question's terms its card or file name holds, each weighted by how few
    of the documents' cards hold it (a word every card has tells none apart)."""
    cards = [card_terms(ix) for ix in indexes]
    weights = {t: bm25_idf(len(cards), sum(t in c for c in cards)) for t in dict.fromkeys(qterms)}
    return np.array([sum(w for t, w in weights.items() if t in c) for c in cards], dtype=np.float64)


@lru_cache(maxsize=4096)
def asked_period(question: str) -> DocumentPeriod:
    return question_period(question)


def _asked_years(asked: DocumentPeriod) -> list[int]:
    return [asked.fiscal_year] if asked.fiscal_year is not None else list(asked.years)


def year_match(card: DocumentCard | None, asked: DocumentPeriod) -> float:
    """1 when the document reports the fiscal year asked about, `COMPARATIVE_YEAR` when it only
    covers that year among others, 0 otherwise (or when either says no year)."""
    years = _asked_years(asked)
    if card is None or not years:
        return 0.0
    if card.period.fiscal_year is not None and card.period.fiscal_year in years:
        return 1.0
    return COMPARATIVE_YEAR if any(y in card.period.years for y in years) else 0.0


def quarter_match(card: DocumentCard | None, asked: DocumentPeriod) -> float:
    """1 when the document's span is the asked one: the quarter asked, or a whole year when the
    question names a year and no quarter; 0 otherwise."""
    if card is None or not _asked_years(asked):
        return 0.0
    return float(card.period.fiscal_quarter == asked.fiscal_quarter)


def period_matches(indexes: Sequence[DocumentIndex], question: str) -> tuple[np.ndarray, np.ndarray]:
    asked = asked_period(question)
    cards = [ix.record.card for ix in indexes]
    return (np.array([year_match(c, asked) for c in cards], dtype=np.float64),
            np.array([quarter_match(c, asked) for c in cards], dtype=np.float64))


def uncovered_years(indexes: Sequence[DocumentIndex], question: str) -> list[int]:
    """The years the question asks about that no document with a known period covers (none
    when no document says its period)."""
    asked = _asked_years(asked_period(question))
    periods = [ix.record.card.period for ix in indexes if ix.record.card is not None and not ix.record.card.period.is_empty()]
    if not asked or not periods:
        return []
    covered = {y for p in periods for y in ([p.fiscal_year] if p.fiscal_year else []) + list(p.years)}
    return [y for y in asked if y not in covered]
