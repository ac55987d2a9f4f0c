"""The one-process engine and the `treerag ask` / `treerag eval` commands over a stored PDF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.navigator.index_cache import NoDocumentsError
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.query import QuerySettings
from tests.support.fakes import FakeRepository
from tests.support.query.documents import kitchen_guide, plant_manual, software_guide_pdf
from treerag.cli import main
from treerag.engine import QueryEngine


async def test_engine_answers_with_page_citation(guide_store: EmbeddedRepository) -> None:
    engine = QueryEngine(guide_store)
    result = await engine.ask("What does error code 41 mean?", None, QuerySettings())
    assert not result.answer.abstained
    first = result.answer.citations[0]
    assert first.file_name == "guide.pdf" and first.pages == [7]
    assert "licence key has expired" in result.answer.answer
    assert result.stats.documents_considered == 2
    assert result.timings.total_ms > 0 and result.tokens_after <= result.tokens_before


async def test_engine_is_deterministic_and_caches_indexes(guide_store: EmbeddedRepository) -> None:
    engine = QueryEngine(guide_store)
    first = await engine.ask("Which variable configures a proxy server?", ["guide.pdf"], QuerySettings(mode="beam"))
    second = await engine.ask("Which variable configures a proxy server?", ["guide.pdf"], QuerySettings(mode="beam"))
    assert first.answer == second.answer
    assert first.mode == "beam"
    (record,) = await engine.records(["guide.pdf"])
    assert record.doc_id in engine.index_cache


async def test_engine_reads_each_record_once_per_query_and_loads_an_index_once() -> None:
    repository = FakeRepository()
    for document in (plant_manual(), kitchen_guide()):
        await repository.put_indexed(document)
    engine = QueryEngine(repository)  # type: ignore[arg-type]
    ids = sorted(repository.documents)

    cold = await engine.ask("How often must the coolant pump be serviced?", ids, QuerySettings())
    reads = repository.reads["find_document"]
    warm = await engine.ask("Where is the valve logbook kept?", ids, QuerySettings())

    assert repository.reads["find_document"] - reads == len(ids)
    assert repository.reads["get_tree"] == len(ids)
    assert cold.timings.load_ms > 0 and warm.timings.load_ms == 0
    assert sorted(warm.documents) == ids


async def test_engine_abstains_on_unanswerable(guide_store: EmbeddedRepository) -> None:
    engine = QueryEngine(guide_store)
    result = await engine.ask("Which Oracle database version does the guide recommend?", None, QuerySettings())
    assert result.answer.abstained and not result.answer.citations


async def test_unknown_document_is_a_clear_error(guide_store: EmbeddedRepository) -> None:
    with pytest.raises(NoDocumentsError, match="no document matches"):
        await QueryEngine(guide_store).ask("anything", ["missing.pdf"], QuerySettings())


async def test_empty_store_says_to_index_first(tmp_path: Path) -> None:
    with pytest.raises(NoDocumentsError, match="treerag index"):
        await QueryEngine(EmbeddedRepository(tmp_path)).ask("anything", None, QuerySettings())


def test_ask_command_prints_answer_citations_and_stats(guide_store: EmbeddedRepository, capsys) -> None:  # noqa: ANN001
    code = main(["ask", "How is a proxy server configured?", "--store", str(guide_store.root)])
    out = capsys.readouterr().out
    assert code == 0
    assert "HTTPS_PROXY" in out and "guide.pdf, p. 5" in out
    assert "Confidence:" in out and "nodes visited" in out
    code = main(["ask", "How is a proxy server configured?", "--store", str(guide_store.root), "--json",
                 "--doc", "guide.pdf", "--mode", "dfs"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["mode"] == "dfs" and payload["answer"]["citations"][0]["pages"] == [5]
    # The navigation path: the sections the walk entered, in order, those kept marked.
    path = payload["path"]
    assert path and all(step["file_name"] == "guide.pdf" for step in path)
    assert any(step["selected"] and step["page_start"] <= 5 <= step["page_end"] for step in path)


def test_eval_command_indexes_pdfs_and_writes_results(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    (pdfs / "guide.pdf").write_bytes(software_guide_pdf())
    dataset = tmp_path / "guide.jsonl"
    dataset.write_text(
        json.dumps({"id": "g1", "doc": "guide.pdf", "question": "Where are diagnostic logs written?",
                    "answer": "the logs folder", "evidence_pages": [6], "type": "factual"}) + "\n"
    )
    out = tmp_path / "results" / "RESULTS.json"
    code = main(["eval", "--dataset", str(dataset), "--pdfs", str(pdfs), "--out", str(out),
                 "--store", str(tmp_path / "store")])
    assert code == 0
    results = json.loads(out.read_text())
    assert results["dataset"] == "guide" and results["n"] == 1
    assert results["systems"]["treerag-auto"]["hit_at_1"] == 1.0
    assert (out.parent / "RESULTS.md").is_file()


async def test_demo_prints_trees_answers_and_an_abstention(guide_store: EmbeddedRepository, capsys) -> None:  # noqa: ANN001
    from treerag.demo import run

    questions = ("What does error code 41 mean?", "Which Kubernetes operator scales the cluster?")
    assert await run(guide_store.root, questions) == 0
    out = capsys.readouterr().out
    assert "== guide.pdf" in out and "3.2 Error codes (p. 7)" in out
    assert "[guide.pdf, p. 7]" in out
    assert "Not found in the documents." in out


async def test_demo_on_an_empty_store_says_what_to_do(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from treerag.demo import run

    assert await run(tmp_path) == 2
    assert "make demo" in capsys.readouterr().err
