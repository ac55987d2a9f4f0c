"""What reading a statement page's table costs: from the stored page's lines at answer time,
against pdfium's character boxes at indexing.

    python -m bench.table_reading  ->  bench/results/table_reading.json

The pages are the gold pages of the FinanceBench dev questions (statement and note pages of
10-K filings, the densest tables of the dev data). For each page:

- `text_ms`: pdfium's page text (what indexing stores already, one line per printed row);
- `char_boxes_ms`: every character's box (`services.gateway.web.text_layer.glyphs`: one pdfium
  call per character), what reading columns by position at indexing would add;
- `rows_ms`: reading the page's table rows from the stored text for the question asked of it,
  the row its words name, with its column years, scale and title (`label_figure`, as an
  answer does for each page it reads);
- `char_box_bytes`: the characters' boxes stored as four 4-byte floats each, against
  `text_bytes`, the page text as stored.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from bench.common import configure_bench_logging, latency_summary, shared_data, write_result
from services.gateway.web.text_layer import glyphs
from services.verifier.figures import FIGURE_LABEL_SHARE, topic_words
from shared.text.periods import question_period
from shared.text.tables import label_figure

logger = logging.getLogger("bench.table_reading")

BOX_BYTES = 16  # four float32 per character


def _gold_pages(data: Path) -> dict[tuple[Path, int], str]:
    """Each gold page with the (first) question asked of it."""
    pages: dict[tuple[Path, int], str] = {}
    for line in (data / "qa" / "financebench-dev.jsonl").read_text().splitlines():
        item = json.loads(line)
        pdf = data / "pdfs" / "financebench" / item["doc"]
        for page in item.get("evidence_pages") or []:
            if pdf.is_file():
                pages.setdefault((pdf, int(page)), item["question"])
    return pages


def _measure(pdf: pdfium.PdfDocument, number: int, question: str) -> dict[str, float]:
    page = pdf[number - 1]
    started = time.perf_counter()
    textpage = page.get_textpage()
    text = textpage.get_text_range().replace("\r", "")
    text_s = time.perf_counter() - started
    started = time.perf_counter()
    boxes = glyphs(textpage)
    boxes_s = time.perf_counter() - started
    started = time.perf_counter()
    label_figure(text, topic_words(question), question_period(question).latest_year(), FIGURE_LABEL_SHARE)
    rows_s = time.perf_counter() - started
    textpage.close()
    page.close()
    return {"text_s": text_s, "boxes_s": boxes_s, "rows_s": rows_s, "chars": len(boxes),
            "text_bytes": len(text.encode())}


def run() -> dict[str, Any]:
    measured = []
    by_pdf: dict[Path, list[tuple[int, str]]] = {}
    for (pdf_path, page), question in _gold_pages(shared_data()).items():
        by_pdf.setdefault(pdf_path, []).append((page, question))
    for pdf_path, asked in sorted(by_pdf.items()):
        with pdfium.PdfDocument(pdf_path.read_bytes()) as pdf:
            measured += [_measure(pdf, n, question) for n, question in asked if 1 <= n <= len(pdf)]
    chars = sum(m["chars"] for m in measured)
    text_bytes = sum(m["text_bytes"] for m in measured)
    result = {
        "pages": len(measured),
        "documents": len(by_pdf),
        "text_ms": latency_summary([m["text_s"] for m in measured]),
        "char_boxes_ms": latency_summary([m["boxes_s"] for m in measured]),
        "rows_ms": latency_summary([m["rows_s"] for m in measured]),
        "chars_per_page": round(chars / max(len(measured), 1)),
        "char_box_bytes_per_page": round(chars * BOX_BYTES / max(len(measured), 1)),
        "text_bytes_per_page": round(text_bytes / max(len(measured), 1)),
    }
    logger.info("table reading: %s", result)
    return write_result("table_reading", result)


if __name__ == "__main__":
    configure_bench_logging()
    run()
