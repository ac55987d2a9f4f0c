"""The evaluation harness grades the product itself: `treerag eval --items` gives each question
exactly the answer and citations `treerag ask --json` gives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.pdfs import manual_pdf
from treerag.cli import main
from treerag.evaluation.dataset import load_dataset

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"
QUESTIONS = (
    "How many minutes of checks does the inspection schedule for boiler feedwater require?",
    "Which crew checks the operating limits of the cooling towers?",
    "How long do the checks of the compressed air operating limits take?",
    "What do operators compare each logbook reading with?",
    "Who painted the Mona Lisa?",
)


def _asked(store: Path, question: str, doc: str, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["ask", question, "--doc", doc, "--json", "--no-cache", "--store", str(store)]) == 0
    return json.loads(capsys.readouterr().out)["answer"]


def _evaluated(store: Path, pdfs: Path, dataset: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["eval", "--dataset", str(dataset), "--pdfs", str(pdfs), "--out", str(out), "--store", str(store),
                 "--items", "--systems", "treerag-auto"]) == 0
    capsys.readouterr()
    return {row["id"]: row for row in json.loads(out.with_suffix(".items.json").read_text())["treerag-auto"]}


def _same(evaluated: dict, asked: dict) -> None:
    assert evaluated["answer"] == asked["answer"]
    assert evaluated["abstained"] == asked["abstained"]
    assert evaluated["citations"] == asked["citations"]


def test_eval_items_give_the_answers_and_citations_of_ask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdfs, store = tmp_path / "pdfs", tmp_path / "store"
    pdfs.mkdir()
    data, _ = manual_pdf()
    (pdfs / "manual.pdf").write_bytes(data)
    dataset = tmp_path / "set.jsonl"
    dataset.write_text("".join(json.dumps({"id": f"q{n}", "doc": "manual.pdf", "question": q, "answer": "x",
                                           "evidence_pages": [2]}) + "\n" for n, q in enumerate(QUESTIONS)))
    evaluated = _evaluated(store, pdfs, dataset, tmp_path / "r.json", capsys)
    assert len(evaluated) == len(QUESTIONS)
    answered = 0
    for n, question in enumerate(QUESTIONS):
        asked = _asked(store, question, "manual.pdf", capsys)
        _same(evaluated[f"q{n}"], asked)
        answered += not asked["abstained"]
    assert answered >= 2  # the comparison covers answers with citations, not only refusals


@pytest.mark.shared_data
@pytest.mark.skipif(not (SHARED / "qa").is_dir(), reason="needs ../shared/data beside the repository")
def test_eval_items_match_ask_on_a_sample_of_dev_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [i for i in load_dataset(SHARED / "qa" / "r-manuals-dev.jsonl") if i.doc == "R-FAQ.pdf"][:4]
    assert items, "the R manuals set asks about R-FAQ.pdf"
    dataset = tmp_path / "sample.jsonl"
    dataset.write_text("".join(i.model_dump_json() + "\n" for i in items))
    store = tmp_path / "store"
    evaluated = _evaluated(store, SHARED / "pdfs", dataset, tmp_path / "r.json", capsys)
    for item in items:
        _same(evaluated[item.id], _asked(store, item.question, item.doc, capsys))
