"""What a walk hands on: the pages of its selected sections, and passages built of them.

Each selected section proposes its strongest pages by BM25; the pages are re-scored on their
own evidence (`evidence.page_evidence_scores`) and a page is kept under the section citing it
best. A walk keeps pages as `PageHit`s; `Passage` objects, which carry the page text, are built
only when the walk's own order is the answer's (the fused ranking builds its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from services.navigator.evidence import CANDIDATES_PER_NODE, page_evidence_scores, page_fields
from services.navigator.index import DocumentIndex
from services.navigator.ranking.features import DocumentEvidence
from services.navigator.ranking.fused import FusedRanking
from services.navigator.ranking.page_references import PageRequest, named_first
from services.navigator.resolver import Reference, find_text_references
from services.navigator.scoring import DocumentScores
from shared.model.query import FILE_LABEL_MAX_CHARS, SECTION_TITLE_MAX_CHARS, Passage, QuerySettings, VisitedSection

# A passage's rank score: this share from its page's own lexical score, the rest from the
# node's P(v|q).
PAGE_SHARE = 0.5
# A node's page is kept when its evidence reaches this share of the node's best page.
EVIDENCE_SHARE = 0.5
# Windows up to this many pages are ranked in plain Python (cheaper than numpy's call overhead).
_SMALL_WINDOW = 24


@dataclass(frozen=True)
class PageHit:
    page: int  # 1-based
    score: float  # rounded to 6 places, as passages carry it
    node: int  # flat index of the section citing the page best


@dataclass
class WalkPassages:
    """One document's walk output, in the order it was found: its pages, or, for a document
    without page text, its sections' own title and summary as passages."""

    index: DocumentIndex
    pages: list[PageHit] = field(default_factory=list)
    node_only: list[Passage] = field(default_factory=list)

    def add(self, other: WalkPassages) -> None:
        """`other`'s pages and passages not found already (by page)."""
        pages, spans = {hit.page for hit in self.pages}, {tuple(p.pages) for p in self.node_only}
        self.pages += [hit for hit in other.pages if hit.page not in pages]
        self.node_only += [p for p in other.node_only if tuple(p.pages) not in spans]

    def scored(self) -> list[tuple[float, PageHit | Passage]]:
        return [(hit.score, hit) for hit in self.pages] + [(p.score, p) for p in self.node_only]

    def text_references(self, strongest: int) -> list[Reference]:
        """The cross-references the `strongest` pages or passages make in their text."""
        best = sorted(self.scored(), key=lambda item: -item[0])[:strongest]
        found: list[Reference] = []
        for _, item in best:
            if isinstance(item, PageHit):
                found += page_fields(self.index).text_references(item.page)  # found once per index
            else:
                found += find_text_references(item.text)
        return found

    def passages(self) -> list[Passage]:
        index = self.index
        built = []
        for hit in self.pages:
            node = index.nodes[hit.node].node
            built.append(Passage(doc_id=index.doc_id, file_name=index.label, node_id=node.id, title=node.title,
                                 pages=[hit.page], text=index.pages[hit.page - 1], score=hit.score,
                                 section_path=section_path(index, hit.node), whole_page=True))
        return built + self.node_only


def section_path(index: DocumentIndex, node: int) -> list[str]:
    """The titles of the sections enclosing `node`, outermost first, each cut to the length a
    section title may have."""
    return [index.nodes[i].node.title[:SECTION_TITLE_MAX_CHARS] for i in index.path(node)]


def candidate_pages(scores: DocumentScores, nodes: list[int]) -> dict[int, list[int]]:
    """Each node's strongest pages by BM25 (1-based; ties in page order), its first page if
    none mentions a term."""
    index = scores.index
    n_pages = len(index.pages)
    out: dict[int, list[int]] = {}
    for i in nodes:
        node = index.nodes[i].node
        start, stop = node.page_start - 1, min(node.page_end, n_pages)
        if stop <= start:
            out[i] = [node.page_start]
            continue
        if stop - start <= _SMALL_WINDOW:
            window = scores.page[start:stop].tolist()
            # A stable sort on the negated score: ties stay in page order.
            order = sorted((k for k in range(len(window)) if window[k] > 0), key=lambda k: -window[k])
            found = [start + k + 1 for k in order[:CANDIDATES_PER_NODE]]
        else:
            array = scores.page[start:stop]
            ranked = np.argsort(-array, kind="stable")[:CANDIDATES_PER_NODE]
            found = [start + int(k) + 1 for k in ranked if array[k] > 0]
        out[i] = found or [node.page_start]
    return out


def walk_passages(
    scores: DocumentScores,
    selected: dict[int, float],
    settings: QuerySettings,
    pinned_pages: dict[int, int],
    weights: dict[str, float],
    wanted_literals: tuple[str, ...] = (),
) -> WalkPassages:
    """The pages of the `selected` sections (node -> P), each section's page named in
    `pinned_pages` among them."""
    index = scores.index
    out = WalkPassages(index)
    if not index.has_pages:
        for i, p in selected.items():
            node = index.nodes[i].node
            text = f"{node.title}. {node.summary}".strip() if node.summary else node.title
            out.node_only.append(Passage(doc_id=index.doc_id, file_name=index.label, node_id=node.id,
                                         title=node.title, pages=[node.page_start], text=text, score=round(p, 6)))
        return out
    # page -> (rounded score, node) of the best node citing it.
    by_page: dict[int, tuple[float, int]] = {}
    candidates = candidate_pages(scores, list(selected))
    evidence = page_evidence_scores(
        index, sorted({p for ps in candidates.values() for p in ps}), scores.page, weights, wanted_literals
    )
    for i, p in selected.items():
        ranked = sorted(candidates[i], key=lambda page: (-evidence[page], page))
        top = evidence[ranked[0]]
        # Pages far weaker than the node's best add tokens, not evidence.
        pages = [page for page in ranked if evidence[page] >= EVIDENCE_SHARE * top][: settings.pages_per_node]
        if i in pinned_pages and pinned_pages[i] not in pages:
            pages = [pinned_pages[i], *pages][: settings.pages_per_node]
        for page in pages:
            # The page's own evidence ranks it; the node's P breaks near-ties.
            score = PAGE_SHARE * evidence.get(page, 0.0) + (1 - PAGE_SHARE) * p
            current = by_page.get(page)
            if current is None or score > current[0]:
                by_page[page] = (round(score, 6), i)
    out.pages = [PageHit(page, score, i) for page, (score, i) in by_page.items()]
    return out


def ranked_passages(ranking: FusedRanking, evidence: Sequence[DocumentEvidence], settings: QuerySettings) -> list[Passage]:
    """The model's best pages as passages, each in the deepest section holding it."""
    passages = []
    for ranked in ranking.pages[: settings.context_pages]:
        index = evidence[ranked.document].index
        deepest = int(index.page_to_deepest[ranked.page - 1])
        node = index.nodes[deepest].node if deepest >= 0 else None
        passages.append(Passage(
            doc_id=index.doc_id, file_name=index.label, node_id=node.id if node else f"page-{ranked.page}",
            title=node.title if node else "", pages=[ranked.page], text=index.pages[ranked.page - 1],
            score=round(ranked.score, 6), section_path=section_path(index, deepest) if node else [],
            whole_page=True,
        ))
    return passages


def named_passages_first(passages: list[Passage], request: PageRequest) -> list[Passage]:
    """The walk's passages (best first) with each document's named pages first among its own."""
    if not request.found:
        return passages
    order = named_first(passages, lambda p: (p.doc_id, p.pages[0] if p.pages else 0), request)
    return [passages[k].model_copy(update={"score": passages[place].score}) for place, k in enumerate(order)]


def visited_sections(
    index: DocumentIndex, reached: dict[int, str], selected: set[int], room: int
) -> list[VisitedSection]:
    """The sections of one document the navigator reached (node -> how, in order), at most `room`."""
    path = []
    for i, via in list(reached.items())[: max(0, room)]:
        node = index.nodes[i].node
        path.append(VisitedSection(
            doc_id=index.doc_id, file_name=index.label[:FILE_LABEL_MAX_CHARS], node_id=node.id,
            title=node.title[:SECTION_TITLE_MAX_CHARS],
            page_start=node.page_start, page_end=node.page_end, selected=i in selected, via=via,
        ))
    return path
