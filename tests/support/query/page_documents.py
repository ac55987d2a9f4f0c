"""Generated PDFs whose pages look alike, so that only the page a question names tells them apart:
an office directory with roman-numbered front matter (/PageLabels), a slide deck, a report
whose cover carries its date, title and author, and a handbook that prints its own page numbers
behind an unnumbered cover and contents page."""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime

from fpdf import FPDF

CITIES = [
    "Aberdeen", "Bristol", "Cardiff", "Dundee", "Exeter", "Falmouth", "Glasgow", "Hereford", "Inverness",
    "Kendal", "Lincoln", "Margate", "Norwich", "Oban", "Perth", "Reading", "Salford", "Truro", "Wells", "York",
]
SURNAMES = [
    "Abbot", "Barlow", "Carver", "Dalton", "Ellery", "Fenwick", "Garrow", "Hollis", "Ingram", "Jessop",
    "Kirby", "Lattimer", "Marsden", "Norbury", "Oakley", "Pryor", "Quinlan", "Radley", "Stanton", "Tolley",
]
# Front matter of the directory: four pages printed i .. iv before page 1.
FRONT_MATTER = 4
DIRECTORY_OFFICES = 14
DECK_SLIDES = 12
HANDBOOK_BODY_PAGES = 16


@dataclass(frozen=True)
class Office:
    city: str
    fax: str
    phone: str
    manager: str


def office(k: int) -> Office:
    """The k-th (0-based) office of the directory: every office has a fax, a phone and a manager."""
    return Office(
        city=CITIES[k % len(CITIES)],
        fax=f"01{k + 2:02d}7 {40 + 3 * k:03d} {500 + 17 * k:04d}",
        phone=f"01{k + 2:02d}7 {90 + 7 * k:03d} {100 + 31 * k:04d}",
        manager=f"{['Ann', 'Ben', 'Cleo', 'Dev', 'Eli'][k % 5]} {SURNAMES[k % len(SURNAMES)]}",
    )


def _pdf(orientation: str = "portrait") -> FPDF:
    pdf = FPDF(orientation=orientation, format="A4")
    pdf.set_auto_page_break(auto=False)
    pdf.set_creation_date(datetime(2024, 1, 1, tzinfo=UTC))  # identical bytes from run to run
    return pdf


def _text(pdf: FPDF, lines: list[str], size: int = 11) -> None:
    pdf.set_font("Helvetica", "", size)
    for line in lines:
        pdf.multi_cell(0, 7, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)


def _heading(pdf: FPDF, title: str, size: int = 16) -> None:
    pdf.set_font("Helvetica", "B", size)
    pdf.cell(0, 12, title, new_x="LMARGIN", new_y="NEXT")


def directory_pdf(front_matter: bool = True) -> bytes:
    """Front matter labelled i .. iv (/PageLabels, lower-case roman), then one office per page
    labelled 1 .. 14. The page text prints no page numbers: only the labels say them. Without
    `front_matter`, the offices alone, on pages 1 .. 14 and without labels."""
    pdf = _pdf()
    front = [
        ("Office directory", ["Regional offices of the Northwind Water Board. Fourth edition."]),
        ("Contents", ["Front matter, then one regional office per page in alphabetical order."]),
        ("Foreword", ["The board keeps one office in each region. Visitors are welcome on weekdays."]),
        ("How to use this directory", ["Each page gives an office's address, telephone and fax number."]),
    ]
    for k, (title, lines) in enumerate(front if front_matter else []):
        pdf.add_page()
        if k == 0:
            pdf.set_page_label("r")  # lower-case roman from i
        pdf.set_xy(10, 20)
        _heading(pdf, title, 20)
        _text(pdf, lines)
    for k in range(DIRECTORY_OFFICES):
        pdf.add_page()
        if k == 0 and front_matter:
            pdf.set_page_label("D", label_start=1)  # decimal, restarting at 1
        item = office(k)
        pdf.set_xy(10, 20)
        _heading(pdf, f"{item.city} regional office")
        _text(pdf, [
            f"The {item.city} office serves the towns and farms of its region.",
            f"Telephone: {item.phone}. Fax: {item.fax}.",
            f"Office manager: {item.manager}. Opening hours are nine to five on weekdays.",
        ])
    return bytes(pdf.output())


def slide_title(k: int) -> str:
    return f"Quarterly results for {CITIES[(k + 5) % len(CITIES)]}"


def slide_growth(k: int) -> int:
    return 3 + 2 * k


def deck_pdf() -> bytes:
    """A slide deck: landscape pages, one region per slide, each with its revenue growth."""
    pdf = _pdf("landscape")
    for k in range(DECK_SLIDES):
        pdf.add_page()
        pdf.set_xy(15, 25)
        _heading(pdf, slide_title(k), 24)
        _text(pdf, [
            f"Revenue grew by {slide_growth(k)} percent against the same quarter last year.",
            f"Lead: {office(k).manager}. Next review in the following quarter.",
        ], 16)
    return bytes(pdf.output())


REPORT_TITLE = "Review of the Harbour Dredging Works"
REPORT_AUTHOR = "Dana Whitlock"
REPORT_ISSUER = "Office of Marine Works"
REPORT_DATE = "12 March 2023"
REPORT_GOVERNOR = "Governor Ruth Calloway"


def report_pdf() -> bytes:
    """A six-page report: its cover carries the title, author, issuer, date and the governor
    who commissioned it; later pages give other dates and another governor."""
    pdf = _pdf()
    pdf.add_page()
    pdf.set_xy(10, 50)
    _heading(pdf, REPORT_TITLE, 22)
    _text(pdf, [
        f"Issued by the {REPORT_ISSUER}. Written by {REPORT_AUTHOR}.",
        f"Dated {REPORT_DATE}.",
        f"Commissioned by {REPORT_GOVERNOR}, governor of the harbour board.",
    ], 12)
    body = [
        ("Background", "Dredging of the outer channel began on 4 May 2021 and the inner basin followed in 2022."),
        ("Costs", "The works cost 14 million pounds, two million above the first estimate."),
        ("Findings", "Silt returns to the channel within eighteen months unless the breakwater is extended."),
        ("Former governors", "Governor Alan Pike approved the first survey on 9 June 2019."),
        ("Recommendations", "The board should extend the breakwater by 200 metres before the next dredging."),
    ]
    for title, line in body:
        pdf.add_page()
        pdf.set_xy(10, 20)
        _heading(pdf, title)
        _text(pdf, [line, "The harbour board reviews this section every year with the dredging contractor."])
    return bytes(pdf.output())


def handbook_rule(n: int) -> str:
    """The rule printed on the handbook's page numbered n (1-based)."""
    return f"Rule {n}: the {['north', 'south', 'east', 'west'][n % 4]} gate is checked every {n + 1} hours."


def handbook_pdf() -> bytes:
    """An unnumbered cover and contents page, then 16 pages printing "Page 1" .. "Page 16" in
    their footers (printed numbers two behind the physical ones), without /PageLabels."""
    pdf = _pdf()
    for title in ("Site safety handbook", "Contents"):
        pdf.add_page()
        pdf.set_xy(10, 20)
        _heading(pdf, title, 20)
        _text(pdf, ["Rules for every gate of the site, one rule per page."])
    for n in range(1, HANDBOOK_BODY_PAGES + 1):
        pdf.add_page()
        pdf.set_xy(10, 20)
        _heading(pdf, f"Gate rule {n}")
        _text(pdf, [handbook_rule(n), "Guards sign the gate log after each check."])
        pdf.set_font("Helvetica", "", 9)
        pdf.set_xy(10, 285)
        pdf.cell(0, 5, f"Page {n}", align="C")
    return bytes(pdf.output())


def pdf_page_labels(data: bytes) -> list[str] | None:
    """The printed label of every page of a PDF, from its /PageLabels; None when it has none
    (pypdf then gives the physical numbers, which say nothing a page count does not)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if "/PageLabels" not in reader.trailer["/Root"]:
        return None
    return list(reader.page_labels)
