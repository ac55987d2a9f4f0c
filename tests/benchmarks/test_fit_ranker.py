"""`python -m bench.fit_ranker`: fits the shipped models from question sets and their PDFs,
writes the same files twice, and the model it writes ranks a new document's answer page first."""

from __future__ import annotations

import json
from pathlib import Path

from fpdf import FPDF

from bench.fit_ranker import main
from services.indexer.pipeline import IndexOptions, index_pdf
from services.navigator.ranking.features import FEATURES
from services.navigator.ranking.fused import ABSTENTION_FEATURES
from services.navigator.ranking.model import load_model
from shared.model.query import QuerySettings
from tests.support.navigation import navigate
from tests.support.query.documents import FILLER
from tests.support.query.indexes import build
from tests.support.query.synthetic import DISHES, MACHINES

PLANT_FACT = "Each {topic} is serviced every {n} hours by the crew."
KITCHEN_FACT = "The {topic} is baked at {n}0 degrees in the oven."


def _manual_pdf(topics: tuple[str, ...], fact: str) -> bytes:
    """A contents page naming every topic (it matches every question and answers none), then
    one page per topic holding its fact."""
    pdf = FPDF()
    pdf.set_font("Helvetica", "", 11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "Contents", new_x="LMARGIN", new_y="NEXT")
    for k, topic in enumerate(topics):
        pdf.multi_cell(0, 6, f"{k + 1} The {topic} ........ {k + 2}", new_x="LMARGIN", new_y="NEXT")
    for k, topic in enumerate(topics):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"{k + 1} The {topic}", new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(0, 6, f"{fact.format(topic=topic, n=10 + 7 * k)} {FILLER}", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _collection(data: Path, name: str, topics: tuple[str, ...], fact: str, question: str, documents: int) -> None:
    lines = []
    for d in range(documents):
        file_name = f"{name}-{d}.pdf"
        (data / "pdfs" / file_name).write_bytes(_manual_pdf(topics, fact))
        lines += [json.dumps({"id": f"{name}{d}-{k}", "doc": file_name, "question": question.format(topic=t),
                              "answer": str(10 + 7 * k), "evidence_pages": [k + 2]}) for k, t in enumerate(topics)]
    (data / "qa" / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_fitting_script_writes_deterministic_models_that_rank_an_unseen_manual(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "pdfs").mkdir(parents=True)
    (data / "qa").mkdir()
    _collection(data, "plant", MACHINES, PLANT_FACT, "How often is the {topic} serviced by the crew?", 3)
    _collection(data, "kitchen", DISHES, KITCHEN_FACT, "At what temperature is the {topic} baked in the oven?", 3)
    first, second = tmp_path / "a" / "model.json", tmp_path / "b" / "model.json"
    for out in (first, second):
        out.parent.mkdir()
        assert main(["--data", str(data), "--store", str(tmp_path / "store"), "--out", str(out)]) == 0
    assert first.read_bytes() == second.read_bytes()
    lexical = first.with_name("model-lexical.json")
    assert lexical.read_bytes() == second.with_name("model-lexical.json").read_bytes()
    # Another embedder's model: the same dense model, and no lexical file written beside it.
    other = tmp_path / "c" / "model-other.json"
    other.parent.mkdir()
    assert main(["--data", str(data), "--store", str(tmp_path / "store"), "--out", str(other), "--dense-only"]) == 0
    assert other.read_bytes() == first.read_bytes() and sorted(p.name for p in other.parent.iterdir()) == [other.name]

    model = load_model(first)
    assert model.ranker.features == list(FEATURES) and model.abstention.features == list(ABSTENTION_FEATURES)
    unseen = build(index_pdf(_manual_pdf(MACHINES, PLANT_FACT), "plant-new.pdf", IndexOptions()))
    found = navigate("How often is the fan serviced by the crew?", [unseen], QuerySettings(), model=model)
    assert found.passages and found.passages[0].pages == [MACHINES.index("fan") + 2]
    refused = navigate("At what temperature is the pie baked in the oven?", [unseen], QuerySettings(), model=model)
    assert refused.passages == []
