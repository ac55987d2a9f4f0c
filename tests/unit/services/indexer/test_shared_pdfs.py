"""Real third-party PDFs from ../shared/data (skipped with a reason when the folder is absent)."""

from __future__ import annotations

import pytest

from bench.tree_quality import comparable, match
from services.indexer.extract import extract_content, open_document, read_outline
from services.indexer.pipeline import IndexOptions, index_pdf
from shared.model.documents import BuilderName
from shared.model.tree import walk_tree

pytestmark = pytest.mark.shared_data


def test_outline_pdf_gets_verified_outline_tree_covering_the_document(shared_data) -> None:  # type: ignore[no-untyped-def]
    path = shared_data / "pdfs" / "r-manuals" / "R-data.pdf"
    indexed = index_pdf(path.read_bytes(), path.name)
    assert indexed.record.builder == BuilderName.OUTLINE
    nodes = list(walk_tree(indexed.tree.nodes))
    assert sum(n.verified for n in nodes) / len(nodes) >= 0.95
    covered = {p for n in indexed.tree.nodes for p in n.pages}
    assert covered == set(range(1, indexed.record.page_count + 1))
    assert all(n.summary for n in nodes if not n.children)


def test_layout_tree_recovers_most_outline_titles_on_their_pages(shared_data) -> None:  # type: ignore[no-untyped-def]
    path = shared_data / "pdfs" / "r-manuals" / "R-data.pdf"
    pdf = open_document(path.read_bytes(), 10_000)
    extract_content(pdf, with_layout=False)
    reference = [(comparable(e.title), e.page, e.title) for e in read_outline(pdf) if e.page]
    pdf.close()
    indexed = index_pdf(path.read_bytes(), path.name, IndexOptions(builder="layout"))
    assert indexed.record.builder == BuilderName.LAYOUT
    ours = [(comparable(n.title), n.page_start, n.title) for n in walk_tree(indexed.tree.nodes)]
    scores = match(reference, ours)
    assert scores["title_f1"] >= 0.8
    assert scores["start_page_accuracy"] >= 0.95


def test_pdf_without_outline_gets_layout_tree_with_numbered_sections(shared_data) -> None:  # type: ignore[no-untyped-def]
    path = shared_data / "pdfs" / "pageindex" / "earthmover.pdf"
    indexed = index_pdf(path.read_bytes(), path.name)
    assert indexed.record.builder == BuilderName.LAYOUT
    titles = [comparable(n.title) for n in walk_tree(indexed.tree.nodes)]
    for expected in ("introduction", "preliminaries", "computing the emd", "related work"):
        assert expected in titles
