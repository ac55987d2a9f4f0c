"""`treerag verify`: sentences checked against given text or stored pages, JSONL in and out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import pdfs
from treerag.cli import main


def _write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_verify_judges_sentences_against_given_source_text(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    page = "Configuration\nSet R_CHECK_CONSTANTS to 5 to enable the check.\nThe check runs at load time.\n"
    source = _write_lines(tmp_path / "in.jsonl", [
        {"sentence": "Set R_CHECK_CONSTANTS to 5 to enable the check.", "source": page, "question": "How?"},
        {"sentence": "Set R_CHECK_CONSTANTS to 3 to enable the check.", "source": page},
        {"sentence": "Bananas ripen faster in paper bags.", "source": page},
    ])
    out = tmp_path / "out.jsonl"
    assert main(["verify", "--in", str(source), "--out", str(out), "--store", str(tmp_path / "store")]) == 0
    rows = _read_lines(out)
    assert [r["verdict"] for r in rows] == ["supported", "contradicted", "unsupported"]
    assert rows[0]["question"] == "How?" and rows[0]["score"] > rows[1]["score"]
    window = rows[0]["window"]
    assert page[window["start"] : window["end"]] == "Set R_CHECK_CONSTANTS to 5 to enable the check."
    assert "5" in rows[1]["reason"] and "3" in rows[1]["reason"]
    assert "1 supported, 1 contradicted, 1 unsupported" in capsys.readouterr().out


def test_verify_reads_stored_pages_by_document_and_page(tmp_path: Path) -> None:
    store = tmp_path / "store"
    manual, _ = pdfs.manual_pdf()
    assert main(["index", str(pdfs.write(tmp_path, "manual.pdf", manual)), "--store", str(store)]) == 0
    true_fact = pdfs.fact(0, 0)  # on page 2, the first section of the first chapter
    wrong_fact = true_fact.replace(" 11 minutes", " 19 minutes")
    assert wrong_fact != true_fact
    source = _write_lines(tmp_path / "in.jsonl", [
        {"sentence": true_fact, "doc": "manual.pdf", "page": 2},
        {"sentence": wrong_fact, "doc": "manual.pdf", "page": 2},
    ])
    out = tmp_path / "out.jsonl"
    assert main(["verify", "--in", str(source), "--out", str(out), "--store", str(store)]) == 0
    rows = _read_lines(out)
    assert [r["verdict"] for r in rows] == ["supported", "contradicted"]
    assert rows[0]["window"]["page"] == 2 and rows[0]["window"]["doc_id"]


def test_verify_says_which_line_is_wrong_and_how_to_fix_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = _write_lines(tmp_path / "in.jsonl", [{"sentence": "A sentence without a source."}])
    code = main(["verify", "--in", str(source), "--out", str(tmp_path / "out.jsonl"), "--store", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "in.jsonl:1" in err and "`source`" in err
    unknown = _write_lines(tmp_path / "in2.jsonl", [{"sentence": "x", "doc": "missing.pdf", "page": 1}])
    code = main(["verify", "--in", str(unknown), "--out", str(tmp_path / "out.jsonl"), "--store", str(tmp_path / "s")])
    assert code == 2 and "missing.pdf" in capsys.readouterr().err
