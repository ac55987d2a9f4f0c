"""DOCX, HTML, Markdown and text indexing, measured on the R manuals written out in each format.

Each manual's text is written as a document of that format: its bookmarks become headings of
their level (DOCX heading styles, h1-h6, `#`, numbered lines in plain text) placed before the
text of the page they point at, the rest of each page a paragraph. The document is then indexed
as an upload would be, and measured:

- pages/s (CPU, one core) of the whole `index_document` (reading, paginating, tree, summaries);
- the tree against the manual's bookmarks: title precision, recall and F1 (titles normalised as
  in bench.tree_quality; page numbers differ by design, so only titles are compared);
- the share of the pages the paginated document has against the PDF's.

    python -m bench.formats  ->  bench/results/formats.json
"""

from __future__ import annotations

import html
import io
import json
import time
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, shared_data, write_result
from bench.tree_quality import R_MANUALS, comparable, match
from services.indexer.extract import OutlineEntry, extract_content, open_document, read_outline
from services.indexer.pipeline import index_document
from shared.model.tree import walk_tree

Section = tuple[int, str]  # (level, title)


def _manual(path: Path) -> tuple[list[str], list[OutlineEntry]]:
    pdf = open_document(path.read_bytes(), 100_000)
    try:
        content = extract_content(pdf, with_layout=False)
        return content.pages, [e for e in read_outline(pdf) if e.page is not None]
    finally:
        pdf.close()


def _printable(text: str) -> str:
    """Without control characters (page text may carry them; XML cannot)."""
    return "".join(ch for ch in text if ch >= " " or ch == "\t")


def _parts(pages: list[str], outline: list[OutlineEntry]) -> list[tuple[Section | None, str]]:
    """Headings (capped at level 6) before the text of their page; each page one paragraph."""
    by_page: dict[int, list[OutlineEntry]] = {}
    for entry in outline:
        by_page.setdefault(entry.page or 1, []).append(entry)
    parts: list[tuple[Section | None, str]] = []
    for number, text in enumerate(pages, start=1):
        titles = {e.title for e in by_page.get(number, [])}
        for entry in by_page.get(number, []):
            parts.append(((min(entry.level, 6), entry.title), ""))
        lines = (_printable(line).strip() for line in text.splitlines())
        body = " ".join(line for line in lines if line and line not in titles)
        if body:
            parts.append((None, body))
    return parts


def as_docx(parts: list[tuple[Section | None, str]]) -> bytes:
    import docx

    document = docx.Document()
    for heading, body in parts:
        if heading:
            document.add_heading(heading[1], heading[0])
        else:
            document.add_paragraph(body)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def as_html(parts: list[tuple[Section | None, str]]) -> bytes:
    out = ["<!DOCTYPE html><html><head><title>manual</title></head><body>"]
    for heading, body in parts:
        if heading:
            out.append(f"<h{heading[0]}>{html.escape(heading[1])}</h{heading[0]}>")
        else:
            out.append(f"<p>{html.escape(body)}</p>")
    return ("\n".join(out) + "</body></html>").encode()


def as_markdown(parts: list[tuple[Section | None, str]]) -> bytes:
    out = []
    for heading, body in parts:
        out += ["#" * heading[0] + " " + heading[1] if heading else body, ""]
    return "\n".join(out).encode()


def as_text(parts: list[tuple[Section | None, str]]) -> bytes:
    """Plain text: headings as setext (levels 1-2) or standing alone between blank lines."""
    out = []
    for heading, body in parts:
        if heading and heading[0] <= 2:
            out += [heading[1], ("=" if heading[0] == 1 else "-") * max(3, len(heading[1])), ""]
        else:
            out += [heading[1] if heading else body, ""]
    return "\n".join(out).encode()


WRITERS = {"docx": as_docx, "html": as_html, "md": as_markdown, "txt": as_text}


def run() -> dict[str, Any]:
    folder = shared_data() / "pdfs" / "r-manuals"
    rows = []
    for name in R_MANUALS:
        pages, outline = _manual(folder / name)
        reference = [(comparable(e.title), 0, e.title) for e in outline]
        parts = _parts(pages, outline)
        for extension, write in WRITERS.items():
            data = write(parts)
            start = time.process_time()
            indexed = index_document(data, f"{Path(name).stem}.{extension}")
            cpu = time.process_time() - start
            ours = [(comparable(n.title), 0, n.title) for n in walk_tree(indexed.tree.nodes)]
            quality = match(reference, ours)
            rows.append({
                "document": name, "format": extension, "bytes": len(data), "pdf_pages": len(pages),
                "pages": indexed.record.page_count, "builder": indexed.record.builder.value if indexed.record.builder else None,
                "cpu_s": round(cpu, 3), "pages_per_s_cpu": round(indexed.record.page_count / cpu, 1),
                **{k: quality[k] for k in ("precision", "recall", "title_f1")},
            })
    summary = {}
    for extension in WRITERS:
        mine = [r for r in rows if r["format"] == extension]
        pages = sum(r["pages"] for r in mine)
        summary[extension] = {
            "documents": len(mine), "pages": pages, "pdf_pages": sum(r["pdf_pages"] for r in mine),
            "pages_per_s_cpu": round(pages / sum(r["cpu_s"] for r in mine), 1),
            "title_f1_min": min(r["title_f1"] for r in mine),
            "title_f1_mean": round(sum(r["title_f1"] for r in mine) / len(mine), 3),
        }
    return {"documents": rows, "summary": summary}


def main() -> None:
    configure_bench_logging()
    result = run()
    write_result("formats", result)
    print(json.dumps(result["summary"], indent=2))


if __name__ == "__main__":
    main()
