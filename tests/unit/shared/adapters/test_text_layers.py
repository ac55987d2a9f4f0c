"""The words OCR read on a document's scanned pages, with their boxes, in both stores: read back
a page at a time as they were stored, replaced by a rebuild (a page no longer recognised has
none), dropped when the document is indexed again without any, and removed with the document."""

from __future__ import annotations

from typing import Any

from shared.model.documents import DocumentRecord, DocumentStatus, DocumentTree, IndexedDocument
from shared.model.text_layer import Box, TextLayer, TextLine, TextWord
from shared.model.tree import TreeNode


def layer(page: int, *lines: str) -> TextLayer:
    """Page `page` with `lines` printed one under the other, a word every 0.1 of the width."""
    return TextLayer(page=page, aspect=1.294, lines=[
        TextLine.of([TextWord(text=word, box=Box(left=0.1 + 0.1 * k, top=0.1 + 0.05 * row, width=0.08, height=0.02))
                     for k, word in enumerate(line.split())])
        for row, line in enumerate(lines)])


def document(doc_id: str, layers: list[TextLayer]) -> IndexedDocument:
    record = DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf", page_count=3, status=DocumentStatus.READY)
    nodes = [TreeNode(id="0001", title="Intro", page_start=1, page_end=3, level=1)]
    return IndexedDocument(record=record, pages=["one", "two", "three"], tree=DocumentTree(doc_id=doc_id, nodes=nodes),
                           text_layers=layers)


async def test_the_recognised_pages_read_back_one_at_a_time(repo: Any) -> None:
    first, third = layer(1, "Filter replacement", "every six weeks"), layer(3, "Valves are closed first")
    await repo.put_indexed(document("scan", [first, third]))
    assert await repo.get_text_layer("scan", 1) == first
    assert await repo.get_text_layer("scan", 3) == third
    assert await repo.get_text_layer("scan", 2) is None  # a page with text of its own
    assert await repo.get_text_layer("other", 1) is None


async def test_a_rebuild_replaces_them_and_one_without_any_drops_them(repo: Any) -> None:
    await repo.put_indexed(document("scan", [layer(1, "old words"), layer(2, "old page two")]))
    await repo.put_indexed(document("scan", [layer(2, "new page two")]))
    assert await repo.get_text_layer("scan", 1) is None
    assert [line.text for line in (await repo.get_text_layer("scan", 2)).lines] == ["new page two"]
    await repo.put_indexed(document("scan", []))
    assert await repo.get_text_layer("scan", 2) is None
    assert (await repo.get_document("scan")).status == DocumentStatus.READY


async def test_deleting_the_document_removes_them_and_keeps_the_others(repo: Any) -> None:
    kept = layer(1, "kept words")
    await repo.put_indexed(document("gone", [layer(1, "gone words")]))
    await repo.put_indexed(document("kept", [kept]))
    assert await repo.delete_document("gone")
    assert await repo.get_text_layer("gone", 1) is None
    assert await repo.get_text_layer("kept", 1) == kept
