"""How well a document's card (`shared/model/card.py`) matches what a question names: the
issuer, title or subject it names, and the period it asks about.

A shared store holds many filings of one company, each the same kind of text; what tells them
apart is on the card: whose document it is and which fiscal year and quarter it reports. These
are routing features (`routing.py`), fitted with the others.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import PurePath

import numpy as np

from services.navigator.index import DocumentIndex
from shared.model.card import DocType, DocumentCard, DocumentPeriod
from shared.text.lexical import bm25_idf, terms
from shared.text.periods import question_period

# An asked year a document reports only as a comparative (a 10-K shows two or three years).
COMPARATIVE_YEAR = 0.5
# A word the question writes with a capital or a digit first: a name ("Northwind", "PepsiCo",
# "3M", "MGM") or a form ("10-K"), what a card's issuer, title and file name are made of.
_NAME_WORD = re.compile(r"(?<![\w'’])[A-Z0-9][\w&'’-]*")


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
def name_terms(question: str) -> frozenset[str]:
    """The index terms of the words the question writes as names (capital or digit first)."""
    return frozenset(terms(" ".join(m.group(0) for m in _NAME_WORD.finditer(question))))


def split_by_name(question: str, qterms: Sequence[str]) -> tuple[list[str], list[str]]:
    """The question's terms it writes as names, and the others ("Northwind's working capital":
    "northwind"; "work", "capit"): a card matched on a name says whose document it is, one
    matched on a common word ("Water Works" for "working") says much less."""
    names = name_terms(question)
    return [t for t in qterms if t in names], [t for t in qterms if t not in names]


def latest_named(indexes: Sequence[DocumentIndex], name_scores: np.ndarray, question: str) -> np.ndarray:
    """1 for the latest documents among those whose cards best match the names the question
    gives, when it names no period (an analyst asking about a company without a year means
    its current filings); 0 otherwise."""
    out = np.zeros(len(indexes), dtype=np.float64)
    asked = asked_period(question)
    if not name_scores.size or name_scores.max() <= 0 or _asked_years(asked) or asked.period_end is not None:
        return out
    named = np.nonzero(name_scores >= name_scores.max())[0]
    ages = {int(k): _recency(indexes[int(k)].record.card) for k in named}
    known = [age for age in ages.values() if age is not None]
    if not known:
        return out
    newest = max(known)
    for k, age in ages.items():
        out[k] = float(age == newest)
    return out


def _recency(card: DocumentCard | None) -> tuple[int, int] | None:
    """(fiscal year, quarter) of the card's period, a whole year counting as its fourth
    quarter; None when the card names no year."""
    if card is None:
        return None
    year = card.period.fiscal_year or (card.period.period_end.year if card.period.period_end else None)
    if year is None:
        return None
    return year, card.period.fiscal_quarter or 4


@lru_cache(maxsize=4096)
def asked_period(question: str) -> DocumentPeriod:
    return question_period(question)


def _asked_years(asked: DocumentPeriod) -> list[int]:
    return [asked.fiscal_year] if asked.fiscal_year is not None else list(asked.years)


def year_match(card: DocumentCard | None, asked: DocumentPeriod) -> float:
    """1 when the document reports the fiscal year asked about (of several years asked, the
    latest: its report holds the earlier ones as comparatives), `COMPARATIVE_YEAR` when it
    reports or covers another of the asked years, 0 otherwise (or when either says no year)."""
    years = _asked_years(asked)
    if card is None or not years:
        return 0.0
    if card.period.fiscal_year == asked.latest_year():
        return 1.0
    covered = ([card.period.fiscal_year] if card.period.fiscal_year is not None else []) + list(card.period.years)
    return COMPARATIVE_YEAR if any(y in covered for y in years) else 0.0


def quarter_match(card: DocumentCard | None, asked: DocumentPeriod) -> float:
    """1 when the document's span is the asked one: the quarter asked, or a whole year when the
    question names a year and no quarter; 0 otherwise."""
    if card is None or not _asked_years(asked):
        return 0.0
    if card.doc_type is DocType.FORM_10Q and card.period.fiscal_quarter is None:
        return 0.0  # an interim report of an unknown quarter is no whole year, nor the quarter asked
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
