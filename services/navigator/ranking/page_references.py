"""Pages a question names ("page fourteen", "the last page", "the cover"), resolved to the
physical pages of each document, and the cover pages a question about the document itself
looks at first.

A named page that exists is put first among its document's ranked pages (`named_first`), and
the navigator does not refuse a question whose named page exists: the reader said where the
answer is. A question about the document's date, title, author or issuer gets a prior on the
first pages (`COVER_PRIOR`), not a filter: strong evidence on another page still wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from services.navigator.index import DocumentIndex
from services.navigator.ranking.profile import page_profile
from shared.text.page_references import (
    PageMention,
    PageResolution,
    asks_about_the_document,
    cover_pages,
    find_page_mentions,
    resolve_pages,
)

# What a cover page adds to its ranking score (the fitted ranker's log scale) when the question
# asks about the document itself: a factor e^2 on the odds. A cover's words rarely match such a
# question ("Written by" for "who wrote"), so among pages holding little of the question it
# must win over the ranker's own spread; a page that does hold the question's words leads by
# far more than that, and keeps its place.
COVER_PRIOR = 2.0
# A first page with fewer words than this is a picture and a title: the date, author and issuer
# are on the page behind it, which then shares the prior (at half: the cover still comes first).
SHORT_COVER_WORDS = 30

T = TypeVar("T")


def page_labels(index: DocumentIndex) -> Sequence[str] | None:
    """What each physical page prints as its number: the PDF's own page labels when the index
    has them and they differ from the physical numbers (labels 1 .. N say nothing the page count
    does not), else the printed numbering read from the page text (`profile.py`), else None."""
    labels = index.page_labels
    if labels and any(label != str(page) for page, label in enumerate(labels, start=1)):
        return labels
    offset = page_profile(index).printed_offset
    if offset is None:
        return None
    return [str(page - offset) if page > offset else "" for page in range(1, len(index.pages) + 1)]


def named_pages(index: DocumentIndex, mentions: Sequence[PageMention]) -> PageResolution:
    """The physical pages of `index` that the mentions name, and the mentions it has no page for."""
    if not mentions or not index.has_pages:
        return PageResolution((), tuple(mentions))
    return resolve_pages(mentions, len(index.pages), page_labels(index))


def prior_pages(index: DocumentIndex, question: str) -> dict[int, float]:
    """The pages the question looks at first, each with its prior: the cover (and the page
    behind a cover of few words) for a question about the document itself, none otherwise."""
    if not index.has_pages or not asks_about_the_document(question):
        return {}
    covers = cover_pages(len(index.pages))
    if len(index.pages[0].split()) >= SHORT_COVER_WORDS:
        covers = covers[:1]
    return {page: COVER_PRIOR / 2**k for k, page in enumerate(covers)}


@dataclass(frozen=True)
class PageRequest:
    """The pages one question names, per document of the query."""

    mentions: tuple[PageMention, ...]
    by_document: dict[str, tuple[int, ...]]  # doc_id -> its named physical pages

    def named(self, doc_id: str, page: int) -> bool:
        return page in self.by_document.get(doc_id, ())

    @property
    def found(self) -> bool:
        return any(self.by_document.values())


def page_request(question: str, indexes: Sequence[DocumentIndex]) -> PageRequest:
    mentions = tuple(find_page_mentions(question))
    return PageRequest(mentions, {ix.doc_id: named_pages(ix, mentions).pages for ix in indexes if mentions})


def missing_page_warning(request: PageRequest, indexes: Sequence[DocumentIndex]) -> str | None:
    """A warning naming the pages no document of the query has ("page 40" of a 20-page file),
    or None. A page one document has and another lacks is no warning: it names that document."""
    if not request.mentions:
        return None
    missing = [
        m for m in request.mentions
        if not any(named_pages(ix, [m]).pages for ix in indexes)
    ]
    if not missing:
        return None
    sizes = ", ".join(f"{ix.label} has {len(ix.pages)}" for ix in indexes)
    asked = ", ".join(dict.fromkeys(m.phrase for m in missing))
    return f"the question names {asked}, which no document has ({sizes} pages)"


def named_first(items: Sequence[T], key: Callable[[T], tuple[str, int]], request: PageRequest) -> list[int]:
    """The order of `items` (ranked best first) with each document's named pages moved to the
    front of that document's own places in the ranking: documents keep the places the ranking
    gave them, and inside one document the page the question names comes first."""
    slots: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        slots.setdefault(key(item)[0], []).append(k)
    order = list(range(len(items)))
    for doc_id, places in slots.items():
        named = [k for k in places if request.named(doc_id, key(items[k])[1])]
        if not named:
            continue
        rest = [k for k in places if k not in named]
        for place, k in zip(places, named + rest, strict=True):
            order[place] = k
    return order
