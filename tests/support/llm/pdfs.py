"""Generated PDFs without an outline: chapters and sections with distinct facts, and the list
of headings a careful reader would give (what the scripted model replies with)."""

from __future__ import annotations

from fpdf import FPDF

from tests.support.llm.scripted_model import ScriptedHeading

SUBJECTS = [
    "Boiler feedwater", "Cooling towers", "Compressed air", "Steam traps", "Heat exchangers",
    "Pump seals", "Valve actuators", "Flue gas", "Water softening", "Control loops",
    "Turbine bearings", "Fuel handling",
]
ASPECTS = ["Inspection", "Limits", "Repairs"]
PROSE = (
    "Crews record every reading in the plant logbook and compare it with the previous shift. "
    "Unusual values are reported to the control room before the end of the shift. "
)


def fact(chapter: int, section: int) -> str:
    """The one checkable sentence printed in a section."""
    subject = SUBJECTS[chapter % len(SUBJECTS)].lower()
    aspect = ASPECTS[section % len(ASPECTS)].lower()
    return f"The {aspect} interval for {subject} is {7 + 3 * chapter + section} days at site {chapter}{section}."


def handbook_pdf(chapters: int = 11, pages_per_section: int = 3) -> tuple[bytes, list[ScriptedHeading]]:
    """A handbook: a title page, then `chapters` chapters of three sections; a chapter heading
    shares the page of its first section. Pages: 1 + chapters * 3 * pages_per_section (100 by
    default)."""
    pdf = FPDF()
    pdf.set_auto_page_break(auto=False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 24)
    pdf.cell(0, 20, "Plant Operations Handbook", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 12)
    pdf.multi_cell(0, 7, "Procedures and intervals for the utilities of the plant. Edition 4.")
    headings: list[ScriptedHeading] = []
    page = 1
    for c in range(chapters):
        for s in range(len(ASPECTS)):
            for k in range(pages_per_section):
                pdf.add_page()
                page += 1
                pdf.set_font("Helvetica", "", 8)
                pdf.cell(0, 5, "Plant Operations Handbook", new_x="LMARGIN", new_y="NEXT")
                if k == 0 and s == 0:
                    title = f"{c + 1} {SUBJECTS[c % len(SUBJECTS)]}"
                    headings.append(ScriptedHeading(1, title, page))
                    pdf.set_font("Helvetica", "B", 18)
                    pdf.cell(0, 12, title, new_x="LMARGIN", new_y="NEXT")
                if k == 0:
                    title = f"{c + 1}.{s + 1} {ASPECTS[s]} of {SUBJECTS[c % len(SUBJECTS)].lower()}"
                    headings.append(ScriptedHeading(2, title, page))
                    pdf.set_font("Helvetica", "B", 14)
                    pdf.cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
                pdf.set_font("Helvetica", "", 11)
                body = (fact(c, s) + " " if k == 0 else "") + PROSE * 3 + f"Sheet {page}."
                pdf.multi_cell(0, 6, body)
                pdf.set_y(-15)
                pdf.set_font("Helvetica", "", 8)
                pdf.cell(0, 5, f"Page {page}")
    return bytes(pdf.output()), headings
