"""The sections a question or its selected text points at, joined to a walk.

A cross-reference the question makes ("Section 4.2", "Table 3") and a page it names ("page
fourteen") join the walk's selection at the walk's best score, their page pinned among the
section's pages. References found in the text of the walk's strongest pages ("see Section
4.2") join at half their own P(v|q), at most `MAX_TEXT_REFERENCES` of them.
"""

from __future__ import annotations

from services.navigator.index import DocumentIndex
from services.navigator.passages import WalkPassages
from services.navigator.ranking.page_references import PageRequest
from services.navigator.resolver import Reference, resolve
from services.navigator.scoring import DocumentScores
from shared.model.query import QuerySettings, TraversalStats

# References found in selected text add at most this many nodes, read off this many of the
# strongest pages or passages.
MAX_TEXT_REFERENCES = 3
# A section the selected text names joins at this share of its own P(v|q).
TEXT_REFERENCE_SHARE = 0.5


def join_question_references(
    index: DocumentIndex, references: list[Reference], pages: PageRequest, selected: dict[int, float],
    reached: dict[int, str], stats: TraversalStats,
) -> dict[int, int]:
    """Add the sections the question refers to, and those holding the pages it names, to
    `selected` (node -> P) and `reached` (node -> how); the page pinned in each (node -> page)."""
    pinned: dict[int, int] = {}
    top = max(selected.values(), default=0.0)
    for ref in resolve(index, references):
        reached.setdefault(ref.node, "reference")
        selected[ref.node] = max(selected.get(ref.node, 0.0), top)
        if ref.page is not None:
            pinned[ref.node] = ref.page
        stats.references_resolved += 1
    # A page the question names joins the walk as a cross-reference's page does.
    for page in pages.by_document.get(index.doc_id, ()):
        node = int(index.page_to_deepest[page - 1])
        if node >= 0:
            reached.setdefault(node, "reference")
            selected[node] = max(selected.get(node, 0.0), top)
            pinned[node] = page
            stats.references_resolved += 1
    return pinned


def text_referenced(
    scores: DocumentScores, settings: QuerySettings, found: WalkPassages, asked: list[Reference],
    selected: dict[int, float], reached: dict[int, str], pinned: dict[int, int], stats: TraversalStats,
) -> dict[int, float]:
    """The sections the selected text itself names ("see Section 4.2"), not selected already
    nor referred to by the question (`asked`), with their scores; their pages join `pinned`."""
    text_refs = [r for r in found.text_references(MAX_TEXT_REFERENCES) if r not in asked]
    extra: dict[int, float] = {}
    for ref in resolve(scores.index, list(dict.fromkeys(text_refs))[:MAX_TEXT_REFERENCES]):
        if ref.node not in selected:
            reached.setdefault(ref.node, "reference")
            extra[ref.node] = TEXT_REFERENCE_SHARE * scores.probability(ref.node, settings)
            if ref.page is not None:
                pinned[ref.node] = ref.page
            stats.references_resolved += 1
    return extra
