"""PDFs the integration tests generate: sectioned manuals with distinct, checkable facts."""

from __future__ import annotations

from fpdf import FPDF

TOPICS = [
    ("Pump maintenance", "The coolant pump of unit {n} must be serviced every {h} operating hours, "
     "and its bearings are greased with lithium compound grade {g}."),
    ("Safety valves", "Each safety valve of unit {n} opens at a pressure of {p} bar and is tested "
     "by the shift supervisor once per quarter."),
    ("Emergency shutdown", "An emergency shutdown of unit {n} is triggered from the red panel in "
     "control room {r}, which cuts power to all feed motors within two seconds."),
    ("Filter replacement", "The intake filters of unit {n} are replaced after {f} days of service "
     "or when the differential pressure exceeds the alarm limit."),
    ("Lubrication schedule", "Gearboxes of unit {n} receive synthetic oil type {g} every {w} weeks, "
     "recorded in the lubrication logbook kept by the maintenance planner."),
]

FILLER = (
    "Operators read this section before starting any work on the equipment. The procedures are "
    "reviewed every year by the engineering department and changes are announced at the weekly "
    "meeting. Deviations from the procedure are reported in the incident system."
)


def manual_pdf(unit: int, pages_per_section: int = 1, sections: int = len(TOPICS)) -> bytes:
    """A manual for one plant unit: one chapter per topic, each with its own facts and pages.

    Different `unit` numbers give different bytes (so different doc ids) and different facts.
    """
    values = {"n": unit, "h": 500 + 10 * unit, "g": f"L{unit}", "p": 10 + unit, "r": f"C{unit}",
              "f": 30 + unit, "w": 2 + unit % 5}
    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_title(f"Operations manual for unit {unit}")
    for number in range(sections):
        title, fact = TOPICS[number % len(TOPICS)]
        heading = f"{number + 1} {title}" if number < len(TOPICS) else f"{number + 1} {title} (part {number // len(TOPICS) + 1})"
        for page in range(pages_per_section):
            pdf.add_page()
            if page == 0:
                pdf.start_section(heading, level=0)
                pdf.set_font("Helvetica", "B", 18)
                pdf.cell(0, 12, heading, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", "", 11)
            pdf.multi_cell(0, 6, f"{fact.format(**values)} {FILLER}" if page == 0 else f"{FILLER} {FILLER}")
    return bytes(pdf.output())


def corrupt_pdf() -> bytes:
    """A PDF header followed by garbage: accepted by the gateway, refused by the indexer."""
    return b"%PDF-1.7\n" + b"\x00garbage that is not a PDF body\n" * 40
