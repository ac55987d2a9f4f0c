"""Evaluation metrics on a tiny hand-made dataset whose answers are known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.model.query import Citation, VerifiedAnswer
from tests.support.query.documents import plant_manual
from tests.support.query.indexes import build
from treerag.evaluation.baselines import chunk_index, chunk_pages, page_index
from treerag.evaluation.dataset import DatasetError, QAItem, load_dataset
from treerag.evaluation.metrics import aggregate, rouge_l, score_item, token_f1
from treerag.evaluation.runner import SYSTEMS, DocumentBundle, evaluate, markdown_table


def cited(pages: list[int], text: str = "answer") -> VerifiedAnswer:
    return VerifiedAnswer(question="q", answer=text, citations=[Citation(doc_id="d", pages=[p]) for p in pages])


def test_page_metrics_follow_their_definitions() -> None:
    item = QAItem(id="1", doc="x.pdf", question="q", answer="twelve bar", evidence_pages=[4, 5])
    score = score_item(item, cited([4, 9, 5]), context_tokens=100, latency_ms=2.0)
    assert score.hit_at_1 == 1.0
    assert score.precision == pytest.approx(2 / 3)
    assert score.recall == 1.0
    miss = score_item(item, cited([9, 4]), 100, 2.0)
    assert (miss.hit_at_1, miss.precision, miss.recall) == (0.0, 0.5, 0.5)


def test_abstention_is_scored_only_on_unanswerable_items() -> None:
    unanswerable = QAItem(id="u", doc="x.pdf", question="q", answer="NOT_IN_DOCUMENT", type="unanswerable")
    answerable = QAItem(id="a", doc="x.pdf", question="q", answer="12 bar", evidence_pages=[4])
    abstained = VerifiedAnswer(question="q", answer="Not found in the documents.", abstained=True)
    scores = [
        score_item(unanswerable, abstained, 0, 1.0),
        score_item(unanswerable, cited([3]), 0, 1.0),
        score_item(answerable, abstained, 0, 1.0),
    ]
    summary = aggregate(scores)
    assert summary.abstention_accuracy == 0.5
    assert summary.hit_at_1 == 0.0  # the answerable item abstained


def test_text_metrics() -> None:
    assert token_f1("the valve opens at 12 bar", "12 bar") == pytest.approx(2 * (2 / 6) * 1 / (2 / 6 + 1))
    assert rouge_l("a b c d", "a c d") == pytest.approx(2 * 0.75 * 1 / 1.75)
    assert rouge_l("", "a") == 0.0 and token_f1("x", "") == 0.0


def test_latency_percentiles_and_token_mean() -> None:
    item = QAItem(id="a", doc="x.pdf", question="q", answer="y", evidence_pages=[1])
    scores = [score_item(item, cited([1]), tokens, latency) for tokens, latency in [(10, 1.0), (20, 2.0), (30, 9.0)]]
    summary = aggregate(scores)
    assert summary.latency_ms_p50 == 2.0
    assert summary.context_tokens_mean == 20.0


def test_chunks_cover_every_page_in_order() -> None:
    pages = [" ".join(f"w{p}x{i}" for i in range(300)) for p in range(1, 4)]
    texts, spans = chunk_pages(pages, size=256)
    assert spans[0][0] == 1 and spans[-1][-1] == 3
    assert sum(len(t.split()) for t in texts) == 900


def test_runner_end_to_end_on_a_tiny_dataset(tmp_path: Path) -> None:
    rows = [
        {"id": "t1", "doc": "plant.pdf", "question": "How often does the shift supervisor test a safety valve?",
         "answer": "once per quarter", "evidence_pages": [5], "type": "factual"},
        {"id": "t2", "doc": "plant.pdf", "question": "What grade of lithium compound greases the pump bearings?",
         "answer": "L7", "evidence_pages": [3], "type": "factual"},
        {"id": "t3", "doc": "plant.pdf", "question": "Which firmware version does the Siemens controller run?",
         "answer": "NOT_IN_DOCUMENT", "evidence_pages": [], "type": "unanswerable"},
    ]
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    items = load_dataset(path)
    doc = plant_manual()
    bundle = DocumentBundle(build(doc), page_index(doc.record, doc.pages), chunk_index(doc.record, doc.pages))
    report = evaluate("tiny", items, {"plant.pdf": bundle})
    assert report.results.n == 3
    assert set(report.results.systems) == set(SYSTEMS)
    auto = report.results.systems["treerag-auto"]
    assert auto.hit_at_1 == 1.0 and auto.evidence_page_recall == 1.0
    assert auto.abstention_accuracy == 1.0
    assert set(auto.model_dump()) == {
        "hit_at_1", "evidence_page_precision", "evidence_page_recall", "answer_f1", "rouge_l",
        "abstention_accuracy", "context_tokens_mean", "latency_ms_p50", "latency_ms_p95",
    }
    assert "| treerag-auto |" in markdown_table(report.results)


def test_bad_dataset_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1"}\n')
    with pytest.raises(DatasetError, match="bad.jsonl:1"):
        load_dataset(path)
