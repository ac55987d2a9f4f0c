"""The LLM path through the command line, in-process (`treerag.cli.main`), with the environment
pointing the real Gemini client at the local provider server: `index --builder llm`,
`ask` with model answers and the answer cache, `eval --judge`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.verifier.detector import ABSTENTION
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.documents import BuilderName
from tests.support.llm.fake_provider import FakeProvider, Reply
from tests.support.llm.pdfs import fact, handbook_pdf
from tests.support.llm.scripted_model import ScriptedModel
from treerag.cli import main

MODEL = "gemini-2.5-flash"
QUESTION = "What is the limits interval for cooling towers?"
LLM_ENV = ("GOOGLE_API_KEY", "TREERAG_LLM", "TREERAG_LLM_MODEL", "TREERAG_LLM_BASE_URL", "TREERAG_LLM_API_KEY")


@pytest.fixture(scope="module")
def handbook() -> tuple[bytes, list]:
    return handbook_pdf(chapters=4)  # 37 pages, no outline


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def model(offline_env: None, monkeypatch: pytest.MonkeyPatch, handbook) -> Iterator[tuple[FakeProvider, ScriptedModel]]:
    """Gemini configured through the environment, served by the local provider server."""
    scripted = ScriptedModel(handbook[1])
    with FakeProvider(scripted) as server:
        monkeypatch.setenv("TREERAG_LLM", "gemini")
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.setenv("TREERAG_LLM_MODEL", MODEL)
        monkeypatch.setenv("TREERAG_LLM_BASE_URL", server.base_url)
        yield server, scripted


@pytest.fixture
def pdf_path(tmp_path: Path, handbook) -> Path:
    path = tmp_path / "handbook.pdf"
    path.write_bytes(handbook[0])
    return path


@pytest.fixture
def store(tmp_path: Path, pdf_path: Path) -> Path:
    """The handbook indexed offline, so ask tests count query-side model calls only."""
    folder = tmp_path / "store"
    assert main(["index", "--store", str(folder), "--builder", "layout", "--llm", "off", "--no-progress", str(pdf_path)]) == 0
    return folder


def _ask(capsys: pytest.CaptureFixture[str], store: Path, *extra: str) -> dict:
    capsys.readouterr()
    code = main(["ask", QUESTION, "--store", str(store), "--json", *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def _stored_record(store: Path):
    async def read():
        repository = EmbeddedRepository(store)
        (record,) = await repository.list_documents()
        return record, await repository.get_pages(record.doc_id)

    return asyncio.run(read())


def test_ask_answers_with_the_model_and_verified_citations(model, store: Path, capsys) -> None:
    server, scripted = model
    result = _ask(capsys, store, "--mode", "beam", "--llm-scoring")
    assert result["generator"] == f"llm:{MODEL}" and result["answer"]["generator"] == f"llm:{MODEL}"
    assert result["cached"] is False
    assert scripted.count("answer") == 1 and scripted.count("scoring") >= 1
    answer = result["answer"]
    assert fact(1, 1).rstrip(".") in answer["answer"]
    _, pages = _stored_record(store)
    cited = answer["citations"][0]["pages"][0]
    assert fact(1, 1) in " ".join(pages[cited - 1].split())
    assert answer["sentences"] and all(s["grounded"] for s in answer["sentences"])
    assert all(c.model == MODEL for c in server.calls)


def test_repeated_ask_is_a_cache_hit_and_a_changed_setting_misses(model, store: Path, capsys) -> None:
    server, _ = model
    first = _ask(capsys, store)
    calls = len(server.calls)
    assert calls >= 1

    again = _ask(capsys, store)
    assert again["cached"] is True
    assert len(server.calls) == calls  # no navigation, no model call
    assert again["answer"] == first["answer"] and again["generator"] == f"llm:{MODEL}"

    other_mode = _ask(capsys, store, "--mode", "dfs")
    assert other_mode["cached"] is False and other_mode["mode"] == "dfs"

    fresh = _ask(capsys, store, "--no-cache")
    assert fresh["cached"] is False
    assert len(server.calls) > calls  # neither answers nor stored replies were used


def test_model_and_offline_answers_are_cached_apart(model, store: Path, capsys) -> None:
    with_model = _ask(capsys, store)
    offline = _ask(capsys, store, "--llm", "off")
    assert offline["cached"] is False and offline["generator"] == "extractive"
    assert _ask(capsys, store, "--llm", "off")["cached"] is True
    assert _ask(capsys, store)["generator"] == with_model["generator"]


def test_a_question_over_the_length_limit_is_refused_with_the_limit(offline_env, store: Path, capsys) -> None:
    assert main(["ask", "Who wrote " + "the handbook and " * 400 + "?", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "at most 4,000 are accepted" in err and "pydantic" not in err


def test_llm_scoring_without_a_model_is_refused(offline_env, store: Path, capsys) -> None:
    assert main(["ask", QUESTION, "--store", str(store), "--llm-scoring"]) == 2
    assert "TREERAG_LLM" in capsys.readouterr().err


def test_index_with_the_llm_builder_calls_the_model_once_per_chunk(model, tmp_path: Path, pdf_path: Path, capsys) -> None:
    server, scripted = model
    folder = tmp_path / "llm-store"
    assert main(["index", "--store", str(folder), "--builder", "llm", "--no-progress", str(pdf_path)]) == 0
    record, _ = _stored_record(folder)
    assert record.builder == BuilderName.LLM
    assert scripted.count("tree") == 1 and scripted.count("summaries") >= 1
    calls = len(server.calls)
    assert calls == scripted.count("tree") + scripted.count("summaries")
    assert f"{calls} request(s)" in capsys.readouterr().out

    # Rebuilding the same PDF reuses the stored replies: no new model call.
    assert main(["index", "--store", str(folder), "--builder", "llm", "--force", "--no-progress", str(pdf_path)]) == 0
    assert len(server.calls) == calls
    assert _stored_record(folder)[0].builder == BuilderName.LLM


def test_llm_builder_without_a_provider_fails_with_one_line(offline_env, tmp_path: Path, pdf_path: Path, capsys) -> None:
    folder = tmp_path / "store"
    assert main(["index", "--store", str(folder), "--builder", "llm", "--no-progress", str(pdf_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:")
    assert "TREERAG_LLM" in err and "GOOGLE_API_KEY" in err
    assert not (folder / "documents").exists()  # nothing was indexed offline instead


def test_llm_builder_names_the_missing_key(offline_env, tmp_path: Path, pdf_path: Path, capsys) -> None:
    code = main(["index", "--store", str(tmp_path / "s"), "--builder", "llm", "--llm", "gemini", str(pdf_path)])
    assert code == 2
    assert "GOOGLE_API_KEY" in capsys.readouterr().err


def _dataset(tmp_path: Path) -> Path:
    rows = [
        {"id": "q1", "doc": "handbook.pdf", "question": QUESTION, "answer": "10 days", "evidence_pages": [14]},
        {"id": "q2", "doc": "handbook.pdf", "question": "Who founded the company that built the turbines?",
         "answer": "NOT_IN_DOCUMENT", "type": "unanswerable"},
    ]
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _verdict(prompt: str) -> float:
    """The scripted judge's faithfulness: low for an abstention, high for a cited answer."""
    answer = prompt.split("\nAnswer: ", 1)[1].split("\n\nSources:", 1)[0]
    if ABSTENTION.lower() in answer.lower():
        return 0.25
    return 1.0 if "[handbook.pdf, p." in answer else 0.5


def test_eval_judge_adds_judge_means_per_system(model, tmp_path: Path, pdf_path: Path, capsys) -> None:
    server, scripted = model
    judge_prompts: list[str] = []

    def responder(call):
        if "You grade an answer" in call.prompt:
            judge_prompts.append(call.prompt)
            score = _verdict(call.prompt)
            return Reply.json({"faithfulness": score, "relevance": 1.0, "completeness": 1 - score, "rationale": "r"})
        return scripted(call)

    server.responder = responder
    out = tmp_path / "RESULTS.json"
    systems = ("treerag-auto", "bm25-pages")
    code = main([
        "eval", "--dataset", str(_dataset(tmp_path)), "--pdfs", str(tmp_path), "--out", str(out),
        "--store", str(tmp_path / "store"), "--systems", ",".join(systems), "--judge", "--items",
    ])
    assert code == 0, capsys.readouterr().err
    results = json.loads(out.read_text())
    items = json.loads(out.with_suffix(".items.json").read_text())
    # Identical judge prompts (two systems giving the same answer) are asked once.
    assert 1 <= len(judge_prompts) <= 4
    for system in systems:
        row = results["systems"][system]
        expected = [0.25 if s["abstained"] else 1.0 if s["cited_pages"] else 0.5 for s in items[system]]
        assert row["judge_faithfulness"] == pytest.approx(sum(expected) / len(expected))
        assert row["judge_relevance"] == 1.0
        assert row["judge_completeness"] == pytest.approx(1 - row["judge_faithfulness"])
        assert results["judge"]["systems"][system] == {"judged": 2, "failures": 0}
        assert "hit_at_1" in row  # the offline metrics are still there
    assert results["judge"]["model"] == f"gemini:{MODEL}"
    # The judge sees the full text of the page the answer cites.
    assert any(fact(1, 1) in " ".join(p.split()) for p in judge_prompts)
    assert "LLM judge" in out.with_suffix(".md").read_text()


def test_failed_judgements_are_counted_not_averaged(model, tmp_path: Path, pdf_path: Path, capsys) -> None:
    server, scripted = model
    server.responder = lambda call: Reply.error(503, retry_after=0) if "You grade" in call.prompt else scripted(call)
    out = tmp_path / "RESULTS.json"
    code = main([
        "eval", "--dataset", str(_dataset(tmp_path)), "--pdfs", str(tmp_path), "--out", str(out),
        "--store", str(tmp_path / "store"), "--systems", "bm25-pages", "--judge",
    ])
    assert code == 0
    results = json.loads(out.read_text())
    assert results["systems"]["bm25-pages"]["judge_faithfulness"] is None
    assert results["judge"]["systems"]["bm25-pages"] == {"judged": 0, "failures": 2}


def test_eval_judge_without_a_provider_is_an_error(offline_env, tmp_path: Path, pdf_path: Path, capsys) -> None:
    out = tmp_path / "RESULTS.json"
    code = main(["eval", "--dataset", str(_dataset(tmp_path)), "--pdfs", str(tmp_path), "--out", str(out), "--judge"])
    assert code == 2
    assert "--judge needs a model" in capsys.readouterr().err
    assert not out.exists()


def test_auto_builder_uses_a_configured_model_for_a_pdf_without_outline(model, tmp_path: Path, pdf_path: Path) -> None:
    _, scripted = model
    folder = tmp_path / "auto-store"
    assert main(["index", "--store", str(folder), "--no-progress", str(pdf_path)]) == 0
    assert _stored_record(folder)[0].builder == BuilderName.LLM
    assert scripted.count("tree") == 1


def test_ask_with_a_local_openai_compatible_model(offline_env, monkeypatch, store: Path, capsys) -> None:
    with FakeProvider(ScriptedModel()) as server:
        monkeypatch.setenv("TREERAG_LLM", "openai")
        monkeypatch.setenv("TREERAG_LLM_BASE_URL", server.openai_base_url)
        result = _ask(capsys, store, "--llm-model", "llama3.1")
        assert result["generator"] == "llm:llama3.1"
        assert fact(1, 1).rstrip(".") in result["answer"]["answer"]
        assert {c.api for c in server.calls} == {"openai"} and {c.model for c in server.calls} == {"llama3.1"}
        # Another model is another cache entry.
        assert _ask(capsys, store, "--llm-model", "qwen2.5")["cached"] is False


def test_unreachable_model_makes_ask_fail_with_advice(model, store: Path, capsys) -> None:
    server, _ = model
    server.responder = lambda call: Reply.error(503, retry_after=0)
    capsys.readouterr()
    assert main(["ask", QUESTION, "--store", str(store)]) == 1
    err = capsys.readouterr().err
    assert "answer generation failed" in err and "--llm off" in err
    server.responder = ScriptedModel()
    assert _ask(capsys, store)["cached"] is False  # the failure was not cached
