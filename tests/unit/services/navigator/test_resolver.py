"""Cross-references in questions and in selected text are resolved to tree nodes."""

from __future__ import annotations

import pytest

from services.navigator.index import DocumentIndex
from services.navigator.resolver import Reference, find_references, resolve
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import IndexedDocument
from shared.model.query import QuerySettings
from tests.support.navigation import navigate
from tests.support.query.indexes import build


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What does Section 3.2 say?", Reference("section", "3.2")),
        ("see Chapter 4 for details", Reference("chapter", "4")),
        ("Article 5 of the treaty", Reference("article", "5")),
        ("the values in Table 2", Reference("table", "2")),
        ("as Figure 3 shows", Reference("figure", "3")),
        ("listed in Appendix B", Reference("appendix", "b")),
        ("Item 7A of the 10-K", Reference("item", "7a")),
        ("계약서 제3조의 내용은?", Reference("article", "3")),
        ("3장에서 설명하는 내용", Reference("chapter", "3")),
        ("第2章の要点", Reference("chapter", "2")),
        ("第3節では", Reference("section", "3")),
    ],
)
def test_reference_patterns(text: str, expected: Reference) -> None:
    assert expected in find_references(text)


def test_plain_text_has_no_references() -> None:
    assert find_references("How long is bread baked?") == []


async def stored_guide(store: EmbeddedRepository) -> DocumentIndex:
    """The guide's index built from what the store holds (tree and pages read back)."""
    record = await store.find_document("guide.pdf")
    tree = await store.get_tree(record.doc_id)
    pages = await store.get_pages(record.doc_id)
    return build(IndexedDocument(record=record, tree=tree, pages=pages))


async def test_section_reference_resolves_on_a_stored_tree(guide_store: EmbeddedRepository) -> None:
    index = await stored_guide(guide_store)
    resolved = resolve(index, find_references("What does Section 3.2 cover?"))
    assert [index.nodes[r.node].node.title for r in resolved] == ["3.2 Error codes"]
    chapter = resolve(index, find_references("Summarise Chapter 2"))
    assert [index.nodes[r.node].node.title for r in chapter] == ["2 Configuration"]


async def test_table_reference_resolves_to_the_caption_page(guide_store: EmbeddedRepository) -> None:
    index = await stored_guide(guide_store)
    [ref] = resolve(index, find_references("Which platforms does Table 2 list?"))
    assert ref.page == 7
    assert index.nodes[ref.node].node.title == "3.2 Error codes"


async def test_navigation_adds_the_referenced_section(guide_store: EmbeddedRepository) -> None:
    index = await stored_guide(guide_store)
    # The question's words point elsewhere (installation); the reference must still fire.
    result = navigate("Does Section 2.2 matter when running the installer?", [index], QuerySettings())
    assert result.stats.references_resolved >= 1
    assert any(p.pages == [5] for p in result.passages)


def test_text_references_are_explicit_cross_references_only() -> None:
    from services.navigator.resolver import find_text_references

    text = "Table 3: Results. For the options, see Section 4.2 and the list in Appendix B."
    assert find_text_references(text) == [Reference("section", "4.2"), Reference("appendix", "b")]
