"""The sample PDFs `make demo` renders from the docs: their text must say what the docs say."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from treerag.samples import inline, render


def test_code_and_setting_names_keep_their_underscores() -> None:
    assert inline("set `TREERAG_LLM_MAX_CONCURRENCY` or TREERAG_KAFKA_BOOTSTRAP") == (
        "set TREERAG_LLM_MAX_CONCURRENCY or TREERAG_KAFKA_BOOTSTRAP"
    )


def test_emphasis_and_links_lose_their_marks_but_code_keeps_its_characters() -> None:
    assert inline("**bold**, _it_, __strong__, *x*, [the docs](docs/a.md), `a*b*c`") == (
        "bold, it, strong, x, the docs, a*b*c"
    )


def test_a_rendered_page_holds_the_setting_name_as_written(tmp_path: Path) -> None:
    source = tmp_path / "settings.md"
    source.write_text("# Settings\n\nSet `TREERAG_OCR_LANGUAGES` to the scans' languages.\n")
    document = pdfium.PdfDocument(render([source], "Settings", outline=True))
    text = "".join(document[index].get_textpage().get_text_range() for index in range(len(document)))
    assert "TREERAG_OCR_LANGUAGES" in text
