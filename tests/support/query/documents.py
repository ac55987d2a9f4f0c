"""Documents the query tests use: hand-built indexed documents and generated PDFs."""

from __future__ import annotations

from fpdf import FPDF

from shared.model.documents import (
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.ids import DEFAULT_TENANT
from shared.model.tree import TreeNode

FILLER = (
    "This paragraph describes general operating practice. Staff read it before work begins and "
    "the text is reviewed every year by the engineering department."
)


def node(id: str, title: str, start: int, end: int, level: int = 1, children: list[TreeNode] | None = None,
         summary: str = "") -> TreeNode:
    return TreeNode(id=id, title=title, summary=summary, page_start=start, page_end=end, level=level,
                    children=children or [])


def indexed(doc_id: str, file_name: str, pages: list[str], nodes: list[TreeNode],
            tenant: str = DEFAULT_TENANT) -> IndexedDocument:
    record = DocumentRecord(doc_id=doc_id, file_name=file_name, page_count=len(pages), status=DocumentStatus.READY,
                            tenant=tenant)
    return IndexedDocument(record=record, pages=pages, tree=DocumentTree(doc_id=doc_id, nodes=nodes))


def plant_manual(doc_id: str = "a" * 16, tenant: str = DEFAULT_TENANT) -> IndexedDocument:
    """Six pages, two chapters with sections; each fact on exactly one page."""
    pages = [
        f"Plant operations manual. Contents and conventions. {FILLER}",
        f"1 Pumps. The coolant pump must be serviced every 500 operating hours. {FILLER}",
        f"1.1 Pump bearings. Pump bearings are greased with lithium compound grade L7. {FILLER}",
        f"2 Valves. Each safety valve opens at a pressure of 12 bar. {FILLER}",
        f"2.1 Valve testing. The shift supervisor tests every safety valve once per quarter. {FILLER}",
        f"2.2 Valve records. Test results are written into the valve logbook kept in room C4. {FILLER}",
    ]
    nodes = [
        node("0001", "Introduction", 1, 1),
        node("0002", "1 Pumps", 2, 3, children=[node("0003", "1.1 Pump bearings", 3, 3, level=2)]),
        node("0004", "2 Valves", 4, 6, children=[
            node("0005", "2.1 Valve testing", 5, 5, level=2),
            node("0006", "2.2 Valve records", 6, 6, level=2),
        ]),
    ]
    return indexed(doc_id, "plant.pdf", pages, nodes, tenant)


def kitchen_guide(doc_id: str = "b" * 16, tenant: str = DEFAULT_TENANT) -> IndexedDocument:
    pages = [
        f"Kitchen guide. Bread is baked at 220 degrees for forty minutes. {FILLER}",
        f"Soup. A vegetable soup simmers for one hour with onions and carrots. {FILLER}",
        f"Desserts. The chocolate cake needs three eggs and a cup of sugar. {FILLER}",
    ]
    nodes = [node("0001", "Bread", 1, 1), node("0002", "Soup", 2, 2), node("0003", "Desserts", 3, 3)]
    return indexed(doc_id, "kitchen.pdf", pages, nodes, tenant)


SECTIONS = [
    ("1", "Installation", [
        ("1.1", "System requirements", "The installer needs a 64-bit processor and two gigabytes of disk space."),
        ("1.2", "Running the installer", "Run setup with the quiet flag to install without any dialog boxes."),
    ]),
    ("2", "Configuration", [
        ("2.1", "Configuration files", "Settings are read from the file settings.toml in the home folder."),
        ("2.2", "Network proxies", "A proxy server is configured with the variable HTTPS_PROXY."),
    ]),
    ("3", "Troubleshooting", [
        ("3.1", "Log files", "Diagnostic logs are written to the folder named logs beside the program."),
        ("3.2", "Error codes", "Error code 41 means the licence key has expired and must be renewed."),
    ]),
]
TABLE_PAGE_FACT = "Table 2: Supported platforms and their minimum versions."


def software_guide_pdf() -> bytes:
    """A 7-page guide with an outline: numbered chapters and sections, one section per page,
    and a captioned table on the last page."""
    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 20)
    pdf.cell(0, 14, "Software guide", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(0, 6, FILLER, new_x="LMARGIN", new_y="NEXT")
    for number, chapter, sections in SECTIONS:
        for k, (label, title, fact) in enumerate(sections):
            pdf.add_page()
            if k == 0:
                pdf.start_section(f"{number} {chapter}", level=0)
                pdf.set_font("Helvetica", "B", 18)
                pdf.cell(0, 12, f"{number} {chapter}", new_x="LMARGIN", new_y="NEXT")
            pdf.start_section(f"{label} {title}", level=1)
            pdf.set_font("Helvetica", "B", 14)
            pdf.cell(0, 10, f"{label} {title}", new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", "", 11)
            pdf.multi_cell(0, 6, f"{fact} {FILLER}", new_x="LMARGIN", new_y="NEXT")
            if label == "3.2":
                pdf.ln(4)
                pdf.multi_cell(0, 6, TABLE_PAGE_FACT, new_x="LMARGIN", new_y="NEXT")
                pdf.multi_cell(0, 6, "Windows 10. macOS 12. Ubuntu 22.04.", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
