"""Outline, layout and windows trees on generated manuals whose true structure is known."""

from __future__ import annotations

from services.indexer.pipeline import IndexOptions, index_pdf
from shared.model.documents import BuilderName
from shared.model.ids import content_id
from shared.model.tree import TreeNode, walk_tree
from tests.support import pdfs


def _headings(nodes: list[TreeNode]) -> list[tuple[str, int, int]]:
    return [(n.title, n.level, n.page_start) for n in walk_tree(nodes)]


def _assert_well_formed(nodes: list[TreeNode], page_count: int) -> None:
    ids = [n.id for n in walk_tree(nodes)]
    assert len(ids) == len(set(ids))
    for node in walk_tree(nodes):
        assert 1 <= node.page_start <= node.page_end <= page_count
        for child in node.children:
            assert node.page_start <= child.page_start and child.page_end <= node.page_end
            assert child.level == node.level + 1


def test_outline_builder_uses_bookmarks_with_verified_pages() -> None:
    data, expected = pdfs.manual_pdf(chapters=3, sections=2, pages_per_section=2, outline=True)
    indexed = index_pdf(data, "manual.pdf")
    assert indexed.record.builder == BuilderName.OUTLINE
    got = _headings(indexed.tree.nodes)
    for heading in expected:
        assert (heading.title, heading.level, heading.page) in got
    _assert_well_formed(indexed.tree.nodes, indexed.record.page_count)
    assert all(n.verified for n in walk_tree(indexed.tree.nodes))
    # Chapter 1 starts on page 2 and ends where chapter 2 opens a new page.
    chapter1 = next(n for n in indexed.tree.nodes if n.title == "1 Boiler feedwater")
    assert (chapter1.page_start, chapter1.page_end) == (2, 5)


def test_layout_builder_finds_numbered_headings_and_ignores_running_header() -> None:
    data, expected = pdfs.manual_pdf(chapters=3, sections=2, pages_per_section=2, outline=False)
    indexed = index_pdf(data, "manual.pdf")
    assert indexed.record.builder == BuilderName.LAYOUT
    got = _headings(indexed.tree.nodes)
    for heading in expected:
        assert (heading.title, heading.level, heading.page) in got
    titles = [t for t, _, _ in got]
    assert pdfs.RUNNING_HEADER not in titles
    assert not any(t.startswith("Page ") for t in titles)
    _assert_well_formed(indexed.tree.nodes, indexed.record.page_count)


def test_layout_builder_uses_font_size_when_headings_are_unnumbered() -> None:
    data, expected = pdfs.manual_pdf(chapters=2, sections=3, pages_per_section=1, outline=False, numbered=False)
    indexed = index_pdf(data, "manual.pdf")
    got = _headings(indexed.tree.nodes)
    for heading in expected:
        assert (heading.title, heading.level, heading.page) in got


def test_layout_builder_ignores_the_outline_when_asked() -> None:
    data, expected = pdfs.manual_pdf(outline=True)
    indexed = index_pdf(data, "manual.pdf", IndexOptions(builder="layout"))
    assert indexed.record.builder == BuilderName.LAYOUT
    got = _headings(indexed.tree.nodes)
    assert all((h.title, h.level, h.page) in got for h in expected)


def test_windows_builder_covers_every_page() -> None:
    data, _ = pdfs.manual_pdf(chapters=2, sections=2, pages_per_section=2)
    indexed = index_pdf(data, "manual.pdf", IndexOptions(builder="windows", window_pages=4))
    assert indexed.record.builder == BuilderName.WINDOWS
    ranges = [(n.page_start, n.page_end) for n in indexed.tree.nodes]
    assert ranges == [(1, 4), (5, 8), (9, 9)]
    # Window titles are taken from the page text, so they verify.
    assert all(n.verified for n in indexed.tree.nodes)


def test_text_without_headings_falls_back_to_windows() -> None:
    indexed = index_pdf(pdfs.plain_pdf(pages=4), "plain.pdf", IndexOptions(window_pages=2))
    assert indexed.record.builder == BuilderName.WINDOWS
    assert [(n.page_start, n.page_end) for n in indexed.tree.nodes] == [(1, 2), (3, 4)]


def test_leaves_longer_than_limit_are_split() -> None:
    data, _ = pdfs.long_section_pdf(section_pages=24)
    indexed = index_pdf(data, "log.pdf", IndexOptions(max_leaf_pages=10, window_pages=5))
    long_chapter = indexed.tree.nodes[0]
    assert (long_chapter.page_start, long_chapter.page_end) == (1, 24)
    assert long_chapter.children, "a 24-page leaf must be split"
    for leaf in (n for n in walk_tree(indexed.tree.nodes) if not n.children):
        assert leaf.page_end - leaf.page_start + 1 <= 10
    covered = sorted(p for c in long_chapter.children for p in c.pages)
    assert covered == list(range(1, 25))


def test_ids_and_doc_id_are_stable_across_runs() -> None:
    data, _ = pdfs.manual_pdf()
    first = index_pdf(data, "a.pdf")
    second = index_pdf(data, "b.pdf")
    assert first.record.doc_id == second.record.doc_id == content_id(data)
    assert len(first.record.doc_id) == 16
    assert [n.id for n in walk_tree(first.tree.nodes)] == [n.id for n in walk_tree(second.tree.nodes)]
    assert first.tree.nodes[0].id == "0001"


def test_page_store_keeps_full_text_of_every_page() -> None:
    data, _ = pdfs.manual_pdf(chapters=2, sections=2, pages_per_section=1)
    indexed = index_pdf(data, "manual.pdf")
    assert len(indexed.pages) == indexed.record.page_count
    # Page 5 holds chapter 2, section 2 (title page, then one page per section).
    assert pdfs.fact(1, 1) in " ".join(indexed.pages[4].split())
    assert pdfs.fact(1, 1) not in " ".join(indexed.pages[3].split())


def test_progress_reports_every_page() -> None:
    data, _ = pdfs.manual_pdf(chapters=2, sections=1, pages_per_section=2)
    seen: list[int] = []
    indexed = index_pdf(data, "manual.pdf", progress=seen.append)
    assert sum(seen) == indexed.record.page_count


class UnreachableModel:
    """A model client whose every call fails the way an unreachable provider does."""

    model = "unreachable"
    provider = "openai"
    context_tokens = None

    def generate_json(self, prompt, schema, *, purpose):  # type: ignore[no-untyped-def]
        return self.generate_text(prompt, purpose=purpose)

    def generate_text(self, prompt, *, purpose):  # type: ignore[no-untyped-def]
        from shared.adapters.llm.errors import LLMUnavailableError

        raise LLMUnavailableError("model timed out")


def test_llm_failure_falls_back_to_offline_tree_with_warning() -> None:
    data, expected = pdfs.manual_pdf(outline=False)
    indexed = index_pdf(data, "manual.pdf", IndexOptions(builder="llm"), llm=UnreachableModel())
    assert indexed.record.builder == BuilderName.LAYOUT
    assert any("model timed out" in w for w in indexed.record.warnings)


def test_document_title_is_the_largest_text_on_the_first_page() -> None:
    data, _ = pdfs.manual_pdf(outline=True)
    assert index_pdf(data, "manual.pdf").record.title == "Northwind Plant Manual"
    assert index_pdf(pdfs.plain_pdf(pages=1), "plain.pdf").record.title.startswith("Record 1.")


def test_a_filing_nests_sections_under_items_under_parts_and_its_cover_holds_only_the_cover() -> None:
    data, expected = pdfs.filing_pdf()
    indexed = index_pdf(data, "annual-report.pdf")
    assert indexed.record.builder == BuilderName.LAYOUT
    got = _headings(indexed.tree.nodes)
    for heading in expected:
        assert (heading.title, heading.level, heading.page) in got
    cover = indexed.tree.nodes[0]
    assert cover.title == "Northwind Holdings Corporation"
    assert (cover.page_start, cover.page_end, cover.children) == (1, 1, [])
    assert [n.title for n in indexed.tree.nodes[1:]] == list(pdfs.FILING_PARTS)
    _assert_well_formed(indexed.tree.nodes, indexed.record.page_count)
