"""The command line: index, tree, export, import against a store folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import pdfs
from treerag.cli import main


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    manual, _ = pdfs.manual_pdf()
    return {
        "good": pdfs.write(tmp_path, "manual.pdf", manual),
        "plain": pdfs.write(tmp_path, "plain.pdf", pdfs.plain_pdf(pages=2)),
        "notpdf": pdfs.write(tmp_path, "notes.pdf", pdfs.not_a_pdf()),
        "encrypted": pdfs.write(tmp_path, "locked.pdf", pdfs.encrypted_pdf()),
        "scan": pdfs.write(tmp_path, "scan.pdf", pdfs.image_only_pdf(pages=2)),
    }


def test_index_reports_bad_files_and_still_indexes_the_rest(files, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = tmp_path / "store"
    paths = [files["notpdf"], files["good"], files["encrypted"], files["scan"], files["plain"]]
    code = main(["index", *map(str, paths), "--store", str(store)])
    out, err = capsys.readouterr()
    assert code != 0
    error_lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 2
    assert any("notes.pdf" in line and "not a PDF" in line for line in error_lines)
    assert any("locked.pdf" in line and "password" in line for line in error_lines)
    assert any("scan.pdf" in line and "OCR" in line for line in err.splitlines())
    assert "manual.pdf" in out and "plain.pdf" in out
    assert len(list((store / "documents").glob("*.json"))) == 3


def test_index_is_idempotent_and_tree_prints_outline(files, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = str(tmp_path / "store")
    assert main(["index", str(files["good"]), "--store", store]) == 0
    assert main(["index", str(files["good"]), "--store", store]) == 0
    out, _ = capsys.readouterr()
    assert "already indexed" in out
    assert len(list((tmp_path / "store" / "documents").glob("*.json"))) == 1

    assert main(["tree", "manual.pdf", "--store", store]) == 0
    out, _ = capsys.readouterr()
    assert "✓ 1 Boiler feedwater  [pp. 2-5]" in out
    assert "  ✓ 1.1 Inspection schedule  [pp. 2-3]" in out

    assert main(["tree", "manual", "--store", store, "--json"]) == 0
    tree = json.loads(capsys.readouterr().out)
    assert tree["nodes"][1]["title"] == "1 Boiler feedwater"


def test_tree_without_a_document_lists_the_store(files, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = str(tmp_path / "store")
    assert main(["index", str(files["good"]), str(files["plain"]), "--store", store]) == 0
    capsys.readouterr()
    assert main(["tree", "--store", store]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in listed] == ["manual.pdf", "plain.pdf"]
    assert all("ready" in line for line in listed)


def test_tree_of_unknown_document_says_what_to_do(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["tree", "nothing.pdf", "--store", str(tmp_path)]) == 1
    assert "treerag index" in capsys.readouterr().err


def test_export_then_import_round_trip(files, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = str(tmp_path / "store")
    assert main(["index", str(files["good"]), "--store", store, "--builder", "layout"]) == 0
    capsys.readouterr()
    out_file = tmp_path / "tree.json"
    assert main(["export", "manual.pdf", "--format", "pageindex", "--store", store, "--out", str(out_file)]) == 0
    exported = json.loads(out_file.read_text())
    assert exported["doc_name"] == "manual.pdf"
    doc_id = json.loads((next((tmp_path / "store" / "documents").glob("*.json"))).read_text())["doc_id"]

    # Importing onto the indexed document: checked against its stored page text.
    assert main(["import", str(out_file), "--format", "pageindex", "--doc-id", doc_id, "--store", store]) == 0
    out, _ = capsys.readouterr()
    assert "verified against page text" in out
    assert main(["export", doc_id, "--format", "treerag", "--store", store]) == 0
    treerag = json.loads(capsys.readouterr().out)
    assert treerag["id"] == "ROOT" and treerag["children"][1]["title"] == "1 Boiler feedwater"


def test_import_refuses_non_json(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["import", str(bad), "--format", "treerag", "--store", str(tmp_path)]) == 1
    assert "not JSON" in capsys.readouterr().err


def test_index_refuses_a_file_named_with_control_characters(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # A name is printed by `treerag tree` and sent in headers: an escape sequence must not get in.
    manual, _ = pdfs.manual_pdf()
    path = pdfs.write(tmp_path, "manual\x1b[2J.pdf", manual)
    store = tmp_path / "store"
    assert main(["index", str(path), "--store", str(store)]) == 1
    assert "control characters (U+001B)" in capsys.readouterr().err
    assert not list((store / "documents").glob("*.json"))


def test_index_folder_on_two_workers_skips_what_is_stored_and_counts_failures(files, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "folder"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    manual, _ = pdfs.manual_pdf()
    pdfs.write(folder, "manual.pdf", manual)
    pdfs.write(folder / "sub", "copy-of-manual.PDF", manual)
    pdfs.write(folder / "sub" / "deeper", "plain.pdf", pdfs.plain_pdf(pages=3))
    pdfs.write(folder / "sub", "notes.pdf", pdfs.not_a_pdf())
    pdfs.write(folder / ".hidden", "skipped.pdf", pdfs.plain_pdf(pages=1))
    (folder / "image.png").write_bytes(b"\x89PNG not a document type")
    store = tmp_path / "store"

    code = main(["index", str(folder), "--store", str(store), "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 1  # one bad file: reported and counted, the others indexed
    assert "notes.pdf" in err and "not a PDF" in err
    assert "4 files: 2 indexed, 1 skipped, 1 failed" in out
    assert "same content as" in out
    assert len(list((store / "documents").glob("*.json"))) == 2

    (folder / "sub" / "notes.pdf").unlink()
    assert main(["index", str(folder), "--store", str(store), "--workers", "2"]) == 0
    out, _ = capsys.readouterr()
    assert "3 files: 0 indexed, 3 skipped, 0 failed" in out


def test_index_of_a_folder_without_pdfs_says_so(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    assert main(["index", str(tmp_path / "empty"), "--store", str(tmp_path / "store")]) == 1
    assert "no .pdf/" in capsys.readouterr().err


def test_tree_shows_the_documents_card_above_the_tree(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    cover = (
        "FORM 10-K\nANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\n"
        "For the fiscal year ended September 30, 2019\nCommission File Number: 001-12345\n"
        "NORTHWIND TRADERS, INC.\n(Exact name of registrant as specified in its charter)"
    )
    body = "Item 1. Business\nNorthwind sells goods to the trade and the public through its stores."
    path = pdfs.write(tmp_path, "northwind-annual.pdf", pdfs.lines_pdf([cover, body, body]))
    store = str(tmp_path / "store")
    assert main(["index", str(path), "--store", store]) == 0
    capsys.readouterr()

    assert main(["tree", "northwind-annual.pdf", "--store", store]) == 0
    lines = capsys.readouterr().out.splitlines()
    card_lines = lines[1 : lines.index(next(ln for ln in lines if ln.startswith("  ✓") or ln.startswith("  ✗")))]
    shown = " ".join(card_lines)
    assert "type: 10-K" in shown and "issuer: NORTHWIND TRADERS, INC." in shown
    assert "period: FY2019, ended 2019-09-30" in shown
