"""A tenant's ready documents, as a query naming none is asked over: only that tenant's, only
ready ones, and a listing kept between writes is never served after a write changed it."""

from __future__ import annotations

from typing import Any

from shared.model.documents import DocumentRecord, DocumentStatus


def _record(doc_id: str, tenant: str, status: DocumentStatus = DocumentStatus.READY) -> DocumentRecord:
    return DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf", tenant=tenant, status=status)


async def test_only_the_tenants_ready_documents_are_listed(repo: Any) -> None:
    for record in (_record("b" * 16, "acme"), _record("a" * 16, "acme"), _record("c" * 16, "globex"),
                   _record("d" * 16, "acme", DocumentStatus.INDEXING), _record("e" * 16, "acme", DocumentStatus.FAILED)):
        await repo.put_document(record)

    assert [r.doc_id for r in await repo.ready_documents("acme")] == ["a" * 16, "b" * 16]
    assert [r.doc_id for r in await repo.ready_documents("globex")] == ["c" * 16]
    assert await repo.ready_documents("initech") == []


async def test_a_write_is_seen_by_the_next_listing(repo: Any) -> None:
    await repo.put_document(_record("a" * 16, "acme"))
    assert len(await repo.ready_documents("acme")) == 1  # kept now, until a write

    await repo.put_document(_record("b" * 16, "acme", DocumentStatus.INDEXING))
    assert [r.doc_id for r in await repo.ready_documents("acme")] == ["a" * 16]
    await repo.set_status("b" * 16, DocumentStatus.READY)
    assert [r.doc_id for r in await repo.ready_documents("acme")] == ["a" * 16, "b" * 16]

    await repo.begin_deletion("a" * 16)
    assert [r.doc_id for r in await repo.ready_documents("acme")] == ["b" * 16]


async def test_named_records_are_read_together_and_a_deleting_or_missing_one_is_none(repo: Any) -> None:
    for record in (_record("a" * 16, "acme"), _record("b" * 16, "acme", DocumentStatus.INDEXING),
                   _record("c" * 16, "globex")):
        await repo.put_document(record)
    await repo.begin_deletion("c" * 16)

    found = await repo.get_documents(["b" * 16, "a" * 16, "c" * 16, "f" * 16, "a" * 16])

    assert list(found) == ["b" * 16, "a" * 16, "c" * 16, "f" * 16]
    assert found["a" * 16] == await repo.get_document("a" * 16)
    assert found["b" * 16] is not None and found["b" * 16].status == DocumentStatus.INDEXING
    assert found["c" * 16] is None and found["f" * 16] is None
    assert await repo.get_documents([]) == {}
    # A record written since is read as it is now.
    await repo.set_status("b" * 16, DocumentStatus.READY)
    assert (await repo.get_documents(["b" * 16]))["b" * 16].status == DocumentStatus.READY
