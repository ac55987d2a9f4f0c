"""Deleting a document from the one-process store leaves nothing of it behind: no file of the
store holds its id or its text, and the other documents and their cached answers stay."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from services.navigator.index_cache import NoDocumentsError
from shared.adapters.cache import AnswerCache
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import DocumentStatus
from shared.model.query import QuerySettings
from shared.ports.repository import DocumentBeingDeleted
from tests.support.integration.pdfs import manual_pdf
from treerag.cli import main
from treerag.engine import QueryEngine


def _files_holding(store: Path, needle: str) -> list[Path]:
    return [p for p in store.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _ask(store: Path, question: str, doc_ids: list[str] | None = None) -> str:
    async def ask() -> str:
        repo = EmbeddedRepository(store)
        try:
            result = await QueryEngine(repo, answer_cache=AnswerCache(repo)).ask(question, doc_ids, QuerySettings())
            return result.answer.answer
        finally:
            await repo.close()

    return asyncio.run(ask())


def _stored(store: Path, method: str, *args: Any) -> Any:
    return asyncio.run(getattr(EmbeddedRepository(store), method)(*args))


def test_delete_removes_every_trace_of_the_document_and_keeps_the_others(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    for unit in (501, 502):
        (tmp_path / f"unit-{unit}.pdf").write_bytes(manual_pdf(unit=unit))
    assert main(["index", str(tmp_path / "unit-501.pdf"), str(tmp_path / "unit-502.pdf"), "--store", str(store),
                 "--no-progress"]) == 0
    by_name = {r.file_name: r.doc_id for r in _stored(store, "list_documents")}
    gone, kept = by_name["unit-501.pdf"], by_name["unit-502.pdf"]

    # Cached answers: one over both documents citing the one to delete, one over the other only.
    assert "511 bar" in _ask(store, "At what pressure does the safety valve of unit 501 open?")
    assert "512 bar" in _ask(store, "At what pressure does the safety valve of unit 502 open?", [kept])
    text = "opens at a pressure of 511 bar"
    # The page analysis of each, as the indexer stores it (the deleted one's holds its text).
    _stored(store, "put_analysis", gone, f"analysis of {gone}: {text}".encode())
    _stored(store, "put_analysis", kept, f"analysis of {kept}".encode())
    assert _files_holding(store, gone) and _files_holding(store, text)
    assert list((store / "cache").rglob("*.json"))
    capsys.readouterr()

    assert main(["delete", gone, "--store", str(store)]) == 0
    assert gone in capsys.readouterr().out

    assert _files_holding(store, gone) == []
    assert [p for p in store.rglob("*") if gone in str(p)] == []  # pages, tree, PDF, vectors, analysis, cache refs
    assert _files_holding(store, text) == []
    assert _stored(store, "get_analysis", gone) is None
    assert _stored(store, "get_document", gone) is None
    # The other document, and the cached answer citing it, are untouched.
    assert _stored(store, "get_page", kept, 2) is not None
    assert _stored(store, "get_analysis", kept) == f"analysis of {kept}".encode()
    assert _files_holding(store / "cache", kept)
    assert "512 bar" in _ask(store, "At what pressure does the safety valve of unit 502 open?", [kept])


@pytest.mark.parametrize("key", ["0000000000000000", "unit-503.pdf"])
def test_delete_refuses_what_is_not_a_stored_doc_id(tmp_path: Path, capsys, key: str) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    (tmp_path / "unit-503.pdf").write_bytes(manual_pdf(unit=503))
    assert main(["index", str(tmp_path / "unit-503.pdf"), "--store", str(store), "--no-progress"]) == 0
    capsys.readouterr()

    assert main(["delete", key, "--store", str(store)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:")
    assert len(_stored(store, "list_documents")) == 1
    if key.endswith(".pdf"):
        assert "not a doc id" in err  # a file name is a label: the error names the id to use



def test_a_document_being_deleted_is_not_served_and_the_next_delete_finishes_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    (tmp_path / "unit-504.pdf").write_bytes(manual_pdf(unit=504))
    assert main(["index", str(tmp_path / "unit-504.pdf"), "--store", str(store), "--no-progress"]) == 0
    [record] = _stored(store, "list_documents")
    assert "514 bar" in _ask(store, "At what pressure does the safety valve of unit 504 open?")

    # A deletion that stopped right after it started: the record marked, nothing removed yet.
    assert _stored(store, "begin_deletion", record.doc_id) is not None
    for method, key in (("get_document", record.doc_id), ("find_document", record.doc_id[:6]),
                        ("find_document", "unit-504.pdf"), ("find_document", "unit-504")):
        assert _stored(store, method, key) is None, (method, key)
    assert _stored(store, "list_documents") == []
    with pytest.raises(NoDocumentsError):  # nor its cached answer
        _ask(store, "At what pressure does the safety valve of unit 504 open?")
    with pytest.raises(DocumentBeingDeleted):
        _stored(store, "put_document", record)
    assert not _stored(store, "set_status", record.doc_id, DocumentStatus.READY)
    assert _files_holding(store, "opens at a pressure of 514 bar")  # still stored, never served
    capsys.readouterr()

    assert main(["delete", record.doc_id, "--store", str(store)]) == 0
    assert "stopped midway" in capsys.readouterr().out
    assert _files_holding(store, record.doc_id) == [] and _files_holding(store, "514 bar") == []
