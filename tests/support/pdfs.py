"""PDF generators for tests: every file a test needs is made here, deterministically, with fpdf2.

Each generator returns the PDF bytes (and, where useful, what a correct tree must contain);
`write(folder, name, data)` puts them in a test's tmp dir.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

RUNNING_HEADER = "Northwind Operations Manual"

TOPICS = [
    "Boiler feedwater", "Cooling towers", "Compressed air", "Steam traps", "Heat exchangers",
    "Pump seals", "Valve actuators", "Flue gas", "Water softening", "Control loops",
]
ASPECTS = ["Inspection schedule", "Operating limits", "Repair procedure"]


@dataclass(frozen=True)
class ExpectedHeading:
    title: str
    level: int
    page: int  # 1-based physical page where the heading is printed


def fact(chapter: int, section: int) -> str:
    """One checkable sentence per section, unique in the document."""
    topic = TOPICS[chapter % len(TOPICS)].lower()
    aspect = ASPECTS[section % len(ASPECTS)].lower()
    return (
        f"The {aspect} for {topic} requires {11 + 7 * chapter + 3 * section} minutes of "
        f"checks by crew {chapter + 1}{section + 1}."
    )


BODY = (
    "Operators record each reading in the logbook and compare it with the previous shift. "
    "Values outside the documented range are reported to the control room at once. "
    "The supervisor signs the completed checklist before the equipment returns to service. "
)


def _new_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=False)
    # A fixed date keeps the bytes (and so the document id) identical from run to run.
    pdf.set_creation_date(datetime(2024, 1, 1, tzinfo=UTC))
    return pdf


def _page_furniture(pdf: FPDF, number: int) -> None:
    """A running header and a page-number footer, as printed manuals have."""
    pdf.set_font("Helvetica", "", 8)
    pdf.set_xy(10, 8)
    pdf.cell(0, 5, RUNNING_HEADER)
    pdf.set_xy(10, 285)
    pdf.cell(0, 5, f"Page {number}", align="C")
    pdf.set_xy(10, 20)


def _body(pdf: FPDF, text: str, lines: int = 3) -> None:
    """Paragraphs that differ from page to page, as real text does (identical lines at the
    page edges would rightly count as running headers)."""
    pdf.set_font("Helvetica", "", 11)
    for i in range(lines):
        topic = TOPICS[(pdf.page * 3 + i) % len(TOPICS)].lower()
        pdf.multi_cell(0, 6, f"Notes on {topic} follow. {text}", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)


def _cover_page(title: str, title_pt: float, top: float, note: str, note_pt: float, note_line: float) -> FPDF:
    """A new PDF whose first page holds `title` in bold, the largest text, above `note`
    (`note_line` high lines)."""
    pdf = _new_pdf()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", title_pt)
    pdf.set_xy(10, top)
    pdf.cell(0, 14, title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", note_pt)
    pdf.multi_cell(0, note_line, note)
    return pdf


def manual_pdf(
    chapters: int = 3,
    sections: int = 2,
    pages_per_section: int = 2,
    outline: bool = True,
    numbered: bool = True,
    furniture: bool = True,
) -> tuple[bytes, list[ExpectedHeading]]:
    """A manual: title page, then chapters (18 pt bold) of sections (14 pt bold), body text in
    11 pt. With `outline`, every heading is also a bookmark. Chapters start a new page; the
    first section shares its chapter's page. Pages: 1 + chapters * sections * pages_per_section.
    """
    pdf = _cover_page("Northwind Plant Manual", 26, 60, "Procedures and intervals for the utilities of the plant. "
                      "Edition 4.", 12, 7)
    page = 1
    expected: list[ExpectedHeading] = []
    for c in range(chapters):
        for s in range(sections):
            for k in range(pages_per_section):
                pdf.add_page()
                page += 1
                if furniture:
                    _page_furniture(pdf, page)
                else:
                    pdf.set_xy(10, 20)
                if k == 0 and s == 0:
                    title = f"{c + 1} {TOPICS[c % len(TOPICS)]}" if numbered else TOPICS[c % len(TOPICS)]
                    if outline:
                        pdf.start_section(title, level=0)
                    pdf.set_font("Helvetica", "B", 18)
                    pdf.cell(0, 12, title, new_x="LMARGIN", new_y="NEXT")
                    expected.append(ExpectedHeading(title, 1, page))
                    _body(pdf, f"This chapter covers {TOPICS[c % len(TOPICS)].lower()}. " + BODY, 1)
                if k == 0:
                    aspect = ASPECTS[s % len(ASPECTS)]
                    title = f"{c + 1}.{s + 1} {aspect}" if numbered else aspect
                    if outline:
                        pdf.start_section(title, level=1)
                    pdf.set_font("Helvetica", "B", 14)
                    pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
                    expected.append(ExpectedHeading(title, 2, page))
                    pdf.set_font("Helvetica", "", 11)
                    pdf.multi_cell(0, 6, fact(c, s), new_x="LMARGIN", new_y="NEXT")
                _body(pdf, BODY, 3)
    return bytes(pdf.output()), expected


FILING_PARTS = {
    "PART I": {"Item 1. Business": ["Overview", "Products", "Customers", "Competition", "Employees"],
               "Item 1A. Risk Factors": ["Industry risks", "Operating risks", "Financial risks", "Legal risks",
                                        "Market risks"]},
    "PART II": {"Item 7. Management's Discussion": ["Results of operations", "Liquidity", "Capital resources",
                                                     "Critical estimates", "Outlook"]},
}


def filing_pdf() -> tuple[bytes, list[ExpectedHeading]]:
    """An annual report as filings are printed: a cover whose company name (24 pt bold) is the
    largest text, then parts, items and their sections all in the same bold 13 pt over 11 pt
    body text, told apart only by their numbering ("PART I", "Item 1.", none). One section per
    page. Expected levels: part 1, item 2, section 3."""
    pdf = _cover_page("Northwind Holdings Corporation", 24, 40,
                      "Annual report for the fiscal year ended December 31, 2023. Commission file number 1-2345.", 10, 6)
    expected: list[ExpectedHeading] = []
    page = 1
    for part, items in FILING_PARTS.items():
        for i, (item, sections) in enumerate(items.items()):
            for s, section in enumerate(sections):
                pdf.add_page()
                page += 1
                pdf.set_xy(10, 20)
                headings = [(section, 3)]
                if s == 0:
                    headings.insert(0, (item, 2))
                if s == 0 and i == 0:
                    headings.insert(0, (part, 1))
                for title, level in headings:
                    pdf.set_font("Helvetica", "B", 13)
                    pdf.cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
                    expected.append(ExpectedHeading(title, level, page))
                    if level == 2:
                        pdf.set_font("Helvetica", "", 11)
                        pdf.multi_cell(0, 6, f"This item sets out {title.split('. ', 1)[1].lower()}.",
                                       new_x="LMARGIN", new_y="NEXT")
                pdf.set_font("Helvetica", "", 10)
                pdf.multi_cell(0, 5, f"{section} of the company are described here. " + BODY, new_x="LMARGIN",
                               new_y="NEXT")
                _body(pdf, BODY, 2)
    return bytes(pdf.output()), expected


def long_section_pdf(section_pages: int = 24) -> tuple[bytes, list[ExpectedHeading]]:
    """Two chapters without an outline; the first runs `section_pages` pages with no sub-heading,
    so its leaf must be split further."""
    pdf = _new_pdf()
    expected: list[ExpectedHeading] = []
    titles = ["1 Maintenance history", "2 Spare parts"]
    lengths = [section_pages, 2]
    page = 0
    for title, length in zip(titles, lengths, strict=True):
        for k in range(length):
            pdf.add_page()
            page += 1
            _page_furniture(pdf, page)
            if k == 0:
                pdf.set_font("Helvetica", "B", 18)
                pdf.cell(0, 12, title, new_x="LMARGIN", new_y="NEXT")
                expected.append(ExpectedHeading(title, 1, page))
            pdf.set_font("Helvetica", "", 11)
            pump = TOPICS[page % len(TOPICS)].lower()
            pdf.multi_cell(0, 6, f"Log entry {page}: the {pump} unit was overhauled after {page * 13} hours. " + BODY)
    return bytes(pdf.output()), expected


def plain_pdf(pages: int = 3, text: str = BODY) -> bytes:
    """Body text only: no outline, no headings."""
    pdf = _new_pdf()
    for n in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", "", 11)
        pdf.set_xy(10, 20)
        pdf.multi_cell(0, 6, f"Record {n + 1}. " + text)
    return bytes(pdf.output())


def lines_pdf(pages: list[str], cover_heading_pt: float | None = None) -> bytes:
    """Each page's text as it is given, one printed line per line (a cover page, a filing);
    with `cover_heading_pt`, the first page's first line is printed that large, in bold."""
    pdf = _new_pdf()
    for p, text in enumerate(pages):
        pdf.add_page()
        pdf.set_xy(10, 15)
        for i, line in enumerate(text.split("\n")):
            heading = cover_heading_pt is not None and p == 0 and i == 0
            pdf.set_font("Helvetica", "B" if heading else "", cover_heading_pt if heading else 10)
            pdf.cell(0, 9 if heading else 5, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def image_only_pdf(pages: int = 3) -> bytes:
    """Scanned-looking pages: a raster image each, no text layer."""
    from PIL import Image, ImageDraw

    pdf = _new_pdf()
    for n in range(pages):
        image = Image.new("L", (300, 400), color=255)
        draw = ImageDraw.Draw(image)
        for row in range(20, 380, 18):
            draw.rectangle((20, row, 280 - (row * 7 + n * 13) % 90, row + 8), fill=40)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        pdf.add_page()
        pdf.image(io.BytesIO(buffer.getvalue()), x=10, y=10, w=190)
    return bytes(pdf.output())


def encrypted_pdf(user_password: str = "secret") -> bytes:
    """Needs a password to open."""
    pdf = _new_pdf()
    pdf.set_encryption(owner_password="owner-" + user_password, user_password=user_password)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(0, 6, "Confidential. " + BODY)
    return bytes(pdf.output())


def truncated_pdf() -> bytes:
    """A real PDF cut short, as an interrupted download leaves it."""
    data, _ = manual_pdf(chapters=2, sections=2, pages_per_section=1)
    return data[: len(data) // 3]


def corrupt_pdf() -> bytes:
    """A PDF header followed by garbage."""
    return b"%PDF-1.7\n" + bytes((i * 73 + 11) % 256 for i in range(4000)) + b"\n%%EOF\n"


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty (fpdf2 refuses to write one, so by hand)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [] /Count 0 >>",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def not_a_pdf() -> bytes:
    return b"Quarterly figures\nRevenue,Cost\n10,7\n"


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def scanned_copy(data: bytes, dpi: int = 200) -> bytes:
    """The PDF as a scanner would return it: every page an image at `dpi`, no text layer."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(data)
    images = [source[i].render(scale=dpi / 72, grayscale=True).to_pil() for i in range(len(source))]
    source.close()
    buffer = io.BytesIO()
    images[0].save(buffer, format="PDF", save_all=True, append_images=images[1:], resolution=float(dpi))
    return buffer.getvalue()
