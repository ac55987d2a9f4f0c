"""A document's card: what it is, whose it is and which period it covers, read at ingestion
from its first pages, its metadata, its outline and its file name.

Every field is empty when the document does not say: a card never guesses. `sources` tells
where each filled field was read, so a reader can weigh a cover's "For the fiscal year ended"
above a year in a file name.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from pydantic import BaseModel, Field


class DocType(StrEnum):
    FORM_10K = "10-K"
    FORM_10Q = "10-Q"
    FORM_8K = "8-K"
    EARNINGS_RELEASE = "earnings release"
    ANNUAL_REPORT = "annual report"
    PROXY_STATEMENT = "proxy statement"
    MANUAL = "manual"
    GUIDE = "guide"
    PAPER = "paper"
    REPORT = "report"
    BROCHURE = "brochure"
    SLIDES = "slides"
    UNKNOWN = "unknown"


# Forms whose cover a regulator prescribes: their largest text is the regulator's name or the
# form's heading, the same on every such filing, so it does not tell one document from another.
_PRESCRIBED_COVERS = frozenset({DocType.FORM_10K, DocType.FORM_10Q, DocType.FORM_8K, DocType.PROXY_STATEMENT})


class CardSource(StrEnum):
    METADATA = "metadata"  # the PDF's Info dictionary (title, author, subject) or a DOCX/HTML title
    COVER = "cover"  # the text of the first pages
    OUTLINE = "outline"  # bookmark or heading titles
    FILE_NAME = "file name"
    LAYOUT = "layout"  # page shape and how much text the pages hold
    LABELS = "labels"  # the PDF's /PageLabels
    FOOTERS = "footers"  # page-number lines in running headers and footers


class DocumentPeriod(BaseModel):
    """The period a document (or a question) is about.

    Fiscal year convention: the calendar year in which the fiscal year ends ("fiscal year ended
    January 26, 2030" is fiscal 2030), unless the text names the fiscal year itself ("first
    quarter of fiscal 2031, ended November 16, 2030" is fiscal 2031). A quarter whose text names
    no fiscal year is taken to lie in the fiscal year of its end date's calendar year."""

    fiscal_year: int | None = Field(default=None, ge=1900, le=2200)
    fiscal_quarter: int | None = Field(default=None, ge=1, le=4)
    period_end: date | None = Field(default=None, description="The last day of the period reported on.")
    years: list[int] = Field(
        default_factory=list, description="Calendar or fiscal years the text is about, ascending."
    )

    def describe(self) -> str:
        """"FY2023 Q2, ended 2023-06-02"; '' when empty."""
        parts = []
        if self.fiscal_year is not None:
            parts.append(f"FY{self.fiscal_year}" + (f" Q{self.fiscal_quarter}" if self.fiscal_quarter else ""))
        elif self.fiscal_quarter is not None:
            parts.append(f"Q{self.fiscal_quarter}")
        if self.period_end is not None:
            parts.append(f"ended {self.period_end.isoformat()}")
        if not parts and self.years:
            parts.append(", ".join(str(y) for y in self.years))
        return ", ".join(parts)

    def latest_year(self) -> int | None:
        """The fiscal year, else the latest year named: of several years asked about, the one
        whose report holds the others as comparatives."""
        return self.fiscal_year if self.fiscal_year is not None else max(self.years, default=None)

    def is_empty(self) -> bool:
        return self.fiscal_year is None and self.fiscal_quarter is None and self.period_end is None and not self.years


class DocumentCard(BaseModel):
    title: str = ""
    issuer: str = Field(default="", description="The issuer or organisation the document is from.")
    subject: str = Field(default="", description="What the document is about: a product, a subject.")
    doc_type: DocType = DocType.UNKNOWN
    period: DocumentPeriod = Field(default_factory=DocumentPeriod)
    dates: list[date] = Field(default_factory=list, description="Dates printed on the cover, in order.")
    language: str = Field(default="", description="ISO 639-1 code, '' when the text does not tell.")
    page_labels: list[str] = Field(
        default_factory=list,
        description="The printed label of each physical page (labels[0] is page 1, '' where a page has "
        "none); empty when the document carries none.",
    )
    sources: dict[str, CardSource] = Field(
        default_factory=dict, description="Field name -> where its value was read."
    )

    def describe(self) -> str:
        """The card in one line, as a reader names the document: "3M Company — 10-K — FY2018,
        ended 2018-12-31"; the title stands for an issuer the card lacks; '' when empty."""
        parts = [self.issuer or self.title]
        if self.doc_type is not DocType.UNKNOWN:
            parts.append(self.doc_type.value)
        parts.append(self.period.describe())
        return " — ".join(part for part in parts if part)

    def display_title(self) -> str:
        """The title a reader knows the document by: the cover's title, except on a form with a
        prescribed cover, which is named by whose it is, the form and the period ("Northwind
        Traders, Inc. — 10-K — FY2019, ended 2019-09-30"); '' when the card read neither."""
        if self.doc_type in _PRESCRIBED_COVERS and self.issuer:
            return self.describe()
        return self.title
