"""DOCX, HTML, Markdown and text files for tests, generated here from the software guide's
sections (tests/support/query/documents.py), so each format holds the same facts under the same headings.
DOCX files are written by python-docx: a writer independent of the reader under test."""

from __future__ import annotations

import io
import zipfile

from tests.support.query.documents import FILLER, SECTIONS

TITLE = "Software guide"


def _sections() -> list[tuple[int, str, str]]:
    """(level, heading, body) in reading order."""
    items: list[tuple[int, str, str]] = []
    for number, chapter, sections in SECTIONS:
        items.append((1, f"{number} {chapter}", f"This chapter covers {chapter.lower()}."))
        for label, title, fact in sections:
            items.append((2, f"{label} {title}", f"{fact} {FILLER}"))
    return items


def guide_docx() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = TITLE
    document.add_paragraph(f"Welcome to the guide. {FILLER}")
    for level, heading, body in _sections():
        document.add_heading(heading, level)
        document.add_paragraph(body)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Platform", "Minimum version"
    table.cell(1, 0).text, table.cell(1, 1).text = "Ubuntu", "22.04"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def guide_html() -> bytes:
    parts = [f"<!DOCTYPE html><html><head><title>{TITLE}</title><style>h1 {{color: red}}</style>"
             "<script>var hidden = 'never indexed';</script></head><body>",
             "<nav><a href='/'>Home</a> | <a href='/about'>About</a></nav>",
             f"<p>Welcome to the guide. {FILLER}</p>"]
    for level, heading, body in _sections():
        parts.append(f"<h{level}>{heading}</h{level}><p>{body}</p>")
    parts.append("<table><tr><th>Platform</th><th>Minimum version</th></tr><tr><td>Ubuntu</td><td>22.04</td></tr>"
                 "</table></body></html>")
    return "".join(parts).encode("utf-8")


def guide_markdown() -> bytes:
    lines = ["---", f"title: {TITLE}", "---", "", f"Welcome to the **guide**. {FILLER}", ""]
    for level, heading, body in _sections():
        lines += ["#" * level + " " + heading, "", body, ""]
    lines += ["```", "# not a heading: a comment in code", "```", ""]
    return "\n".join(lines).encode("utf-8")


def guide_text() -> bytes:
    lines = [TITLE, "=" * len(TITLE), "", f"Welcome to the guide. {FILLER}", ""]
    for _, heading, body in _sections():
        lines += [heading, "", body, ""]
    return "\n".join(lines).encode("utf-8")


GUIDES = {
    "guide.docx": guide_docx,
    "guide.html": guide_html,
    "guide.md": guide_markdown,
    "guide.txt": guide_text,
}


def zip_without_document() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
    return buffer.getvalue()


def docx_with_broken_xml() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(guide_docx())) as source, zipfile.ZipFile(buffer, "w") as archive:
        for item in source.infolist():
            data = source.read(item)
            archive.writestr(item, data[: len(data) // 2] if item.filename == "word/document.xml" else data)
    return buffer.getvalue()


def ole_file(encrypted: bool) -> bytes:
    """The start of an OLE compound file, as Word writes for password-protected DOCX (an
    EncryptedPackage stream) and for legacy .doc files."""
    body = "EncryptedPackage".encode("utf-16-le") if encrypted else "WordDocument".encode("utf-16-le")
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + body + b"\x00" * 64
