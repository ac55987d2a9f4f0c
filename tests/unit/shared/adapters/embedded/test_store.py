"""The embedded store keeps what one process indexes, and finds documents the way users name them."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.card import CardSource, DocType, DocumentCard, DocumentPeriod
from shared.model.documents import (
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.tree import TreeNode


def _indexed(doc_id: str, file_name: str) -> IndexedDocument:
    node = TreeNode(id="0001", title="Intro", page_start=1, page_end=2, level=1, verified=True)
    record = DocumentRecord(doc_id=doc_id, file_name=file_name, page_count=2, status=DocumentStatus.READY)
    return IndexedDocument(record=record, pages=["one", "two"], tree=DocumentTree(doc_id=doc_id, nodes=[node]))


async def test_round_trip_survives_a_new_process(tmp_path: Path) -> None:
    await EmbeddedRepository(tmp_path).put_indexed(_indexed("abc123", "manual.pdf"))

    reopened = EmbeddedRepository(tmp_path)
    assert (await reopened.get_document("abc123")).status == DocumentStatus.READY
    assert await reopened.get_page("abc123", 2) == "two"
    assert await reopened.get_page("abc123", 3) is None
    tree = await reopened.get_tree("abc123")
    assert tree is not None and tree.nodes[0].title == "Intro"


async def test_find_by_id_prefix_or_file_name_and_refuse_ambiguity(tmp_path: Path) -> None:
    repo = EmbeddedRepository(tmp_path)
    await repo.put_indexed(_indexed("abc123", "manual.pdf"))
    await repo.put_indexed(_indexed("abd999", "report.pdf"))

    assert (await repo.find_document("abc")).doc_id == "abc123"
    assert (await repo.find_document("report.pdf")).doc_id == "abd999"
    assert (await repo.find_document("report")).doc_id == "abd999"
    assert await repo.find_document("ab") is None  # two documents share the prefix
    assert await repo.find_document("missing") is None


async def test_cache_entries_are_namespaced(tmp_path: Path) -> None:
    repo = EmbeddedRepository(tmp_path)
    await repo.put_cached("answers", "k", {"answer": "yes"})
    assert await repo.get_cached("answers", "k") == {"answer": "yes"}
    assert await repo.get_cached("llm", "k") is None


async def test_a_record_changed_or_deleted_by_another_process_is_read_as_it_now_is(tmp_path: Path) -> None:
    reader, writer = EmbeddedRepository(tmp_path), EmbeddedRepository(tmp_path)
    await writer.put_indexed(_indexed("abc123", "manual.pdf"))
    assert (await reader.get_document("abc123")).status == DocumentStatus.READY

    await writer.set_status("abc123", DocumentStatus.FAILED, "re-indexing failed")
    changed = await reader.find_document("manual.pdf")
    assert changed is not None and changed.status == DocumentStatus.FAILED
    assert changed.reason == "re-indexing failed"

    await writer.delete_document("abc123")
    assert await reader.get_document("abc123") is None


async def test_the_listing_follows_records_another_process_adds_changes_and_deletes(tmp_path: Path) -> None:
    reader, writer = EmbeddedRepository(tmp_path), EmbeddedRepository(tmp_path)
    await writer.put_indexed(_indexed("abc123", "manual.pdf"))
    assert [r.doc_id for r in await reader.list_documents()] == ["abc123"]

    listed = (await reader.list_documents())[0]
    listed.file_name = "changed by the caller.pdf"  # a caller's change stays its own
    assert (await reader.list_documents())[0].file_name == "manual.pdf"

    await writer.put_indexed(_indexed("abd999", "report.pdf"))
    await writer.set_status("abc123", DocumentStatus.FAILED, "re-indexing failed")
    assert [(r.doc_id, r.status) for r in await reader.list_documents()] == [
        ("abc123", DocumentStatus.FAILED), ("abd999", DocumentStatus.READY)]

    await writer.set_status("abd999", DocumentStatus.DELETING)
    assert [r.doc_id for r in await reader.list_documents()] == ["abc123"]
    await writer.delete_document("abc123")
    assert await reader.list_documents() == []


async def test_the_documents_card_survives_a_new_process(tmp_path: Path) -> None:
    card = DocumentCard(
        title="Form 10-Q", issuer="Northwind Traders, Inc.", doc_type=DocType.FORM_10Q,
        period=DocumentPeriod(fiscal_year=2023, fiscal_quarter=2, period_end=date(2023, 7, 1), years=[2023]),
        dates=[date(2023, 7, 1), date(2023, 7, 28)], language="en", page_labels=["", "1", "2"],
        sources={"doc_type": CardSource.COVER, "page_labels": CardSource.FOOTERS},
    )
    indexed = _indexed("abc123", "northwind-q2.pdf")
    indexed.record.card = card
    await EmbeddedRepository(tmp_path).put_indexed(indexed)

    stored = await EmbeddedRepository(tmp_path).get_document("abc123")
    assert stored is not None and stored.card == card


async def test_a_record_stored_before_cards_were_read_still_loads(tmp_path: Path) -> None:
    repo = EmbeddedRepository(tmp_path)
    await repo.put_indexed(_indexed("abc123", "manual.pdf"))
    path = tmp_path / "documents" / "abc123.json"
    older = json.loads(path.read_text())
    older.pop("card")
    path.write_text(json.dumps(older))

    stored = await EmbeddedRepository(tmp_path).get_document("abc123")
    assert stored is not None and stored.card is None and stored.file_name == "manual.pdf"
