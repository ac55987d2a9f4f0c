"""Questions the documents ask of themselves: routing training beyond the labelled questions.

A few pages of each document become questions. A question is written the way an analyst
writes one: the issuer's name as people write it, the document's period in one of the
notations questions use, and the page's most distinctive words. Its answer is that page. It
is asked of every document of its shelf, so:

- the same company's other years and forms are the hard negatives, and only the period tells
  them apart;
- other companies' documents of the same year are told apart by the name;
- the same company's other documents of the same period are told apart by the page.

A question names no period when the card gives none, and no issuer when the card names none.

These train the routing weights only. The labelled questions still choose how much routing
counts in a page's score, and they give every held-out figure.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Sequence

from services.navigator.index import DocumentIndex
from services.navigator.route_features import OPENING_PAGES
from shared.model.card import DocType, DocumentCard
from shared.text.lexical import terms
from shared.text.organisations import common_name
from treerag.evaluation.routing_fit import CorpusQuestion

# Pages each document turns into questions.
PAGES_PER_DOCUMENT = 8
# Distinctive words a question takes from its page.
TOPIC_WORDS = 4
# A page shorter than this (characters) is a cover, a divider or a signature page.
MIN_PAGE_CHARS = 600
_WORD = re.compile(r"[A-Za-z][a-z]{3,}")
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}
_INTERIM = (DocType.FORM_10Q, DocType.EARNINGS_RELEASE)


def _hash(*parts: object) -> int:
    return zlib.crc32(":".join(str(p) for p in parts).encode())


def period_phrase(card: DocumentCard, choice: int) -> str:
    """The card's period in one of the notations questions write it in ('' without a year)."""
    year, quarter = card.period.fiscal_year, card.period.fiscal_quarter
    if year is None:
        return ""
    short = f"{year % 100:02d}"
    if quarter is not None and card.doc_type in _INTERIM:
        options = [f"in Q{quarter} {year}", f"as of FY{year}Q{quarter}",
                   f"in the {_ORDINALS[quarter]} quarter of fiscal {year}", f"in Q{quarter} FY{short}"]
    else:
        options = [f"in FY{year}", f"in fiscal {year}", f"in {year}", f"for fiscal year {year}", f"in FY{short}"]
    return options[choice % len(options)]


def topic_words(index: DocumentIndex, page: int) -> list[str]:
    """The page's words weighed by how often it uses them and how few of the document's pages
    do, best first, one per index term."""
    weights: dict[str, tuple[str, float]] = {}
    for word, count in Counter(_WORD.findall(index.pages[page])).items():
        found = terms(word)
        if not found:
            continue
        term = found[0]
        first, weight = weights.get(term, (word.lower(), 0.0))
        weights[term] = (first, weight + count * index.page_index.idf(term))
    ranked = sorted(weights.values(), key=lambda kv: (-kv[1], kv[0]))
    return [word for word, _ in ranked[:TOPIC_WORDS]]


def document_questions(index: DocumentIndex, shelf: tuple[DocumentIndex, ...], per_document: int) -> list[CorpusQuestion]:
    """Up to `per_document` questions about pages of `index`, each asked of `shelf`."""
    card = index.record.card or DocumentCard()
    pages = [p for p in range(OPENING_PAGES, len(index.pages)) if len(index.pages[p]) >= MIN_PAGE_CHARS]
    name = common_name(card.issuer) if card.issuer else ""
    out: list[CorpusQuestion] = []
    for j in range(min(per_document, len(pages))):
        choice = _hash(index.label, j)
        page = pages[choice % len(pages)]
        topic = topic_words(index, page)
        if len(topic) < 2:
            continue
        form = card.doc_type.value if choice >> 16 & 1 and card.doc_type is not DocType.UNKNOWN else ""
        owner = f"{name}'s" if name else "the"
        subject = f"{owner} {form}" if form else name or "the document"
        period = period_phrase(card, choice >> 8)
        question = f"What does {subject} report{' ' + period if period else ''} about {' '.join(topic)}?"
        out.append(CorpusQuestion(f"self:{index.label}:{j}", question, index.label,
                                  frozenset({(index.label, page + 1)}), shelf, self_made=True))
    return out


def shelf_questions(shelf: Sequence[DocumentIndex], per_document: int = PAGES_PER_DOCUMENT) -> list[CorpusQuestion]:
    """The questions every document of `shelf` asks of itself, each asked of the whole shelf."""
    asked = tuple(shelf)
    if len(asked) < 2 or per_document <= 0:
        return []
    return [q for index in asked for q in document_questions(index, asked, per_document)]
