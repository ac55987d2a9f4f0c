"""The document card read at ingestion: what a document is, whose, and of which period, from
its first pages, metadata, outline and file name, and nothing when none of them says."""

from __future__ import annotations

from datetime import date

from services.indexer.card import CARD_PAGES, CardEvidence, build_card
from services.indexer.pipeline import index_document
from shared.model.card import CardSource, DocType, DocumentCard
from tests.support.pdfs import lines_pdf

FILLER = (
    "Indicate by check mark whether the registrant has filed all reports required to be filed by "
    "Section 13 or 15(d) of the Securities Exchange Act of 1934 during the preceding 12 months.\n"
)

ANNUAL_COVER = (
    "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nWashington, D.C. 20549\n__________\nFORM 10-K\n"
    "(Mark One)\n☒ ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\n"
    "For the fiscal year ended September 30, 2019\nor\n"
    "☐ TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\n"
    "For the transition period from to\nCommission File Number: 001-12345\n"
    "NORTHWIND TRADERS, INC.\n(Exact name of registrant as specified in its charter)\n"
    "Delaware 12-3456789\n(State or other jurisdiction of incorporation)\n" + FILLER
    + "The aggregate market value of the voting stock held by non-affiliates as of March 29, 2019 was $1.2 billion.\n"
    "As of November 8, 2019, 41,000,000 shares were outstanding.\n"
)
CONTENTS = "NORTHWIND TRADERS, INC.\nFORM 10-K\nTABLE OF CONTENTS\nPART I\nItem 1. Business 3\nItem 1A. Risk Factors 9\n"

QUARTERLY_COVER = (
    "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 10-Q\n"
    "☒ QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934\n"
    "For the quarterly period ended October 1, 2022\nor\n☐ TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d)\n"
    "Commission File Number 000-98765 ____________ Contoso Holdings plc\n"
    "(Exact name of registrant as specified in its charter)\n" + FILLER
)
QUARTERLY_CONTENTS = (
    "Contoso Holdings plc\nTABLE OF CONTENTS\nPART I—FINANCIAL INFORMATION\n"
    "Condensed Consolidated Statements of Operations\nThree and Nine Months Ended October 1, 2022 and October 2, 2021 4\n"
    "Condensed Consolidated Statements of Cash Flows\nNine Months Ended October 1, 2022 and October 2, 2021 6\n"
)

CURRENT_REPORT = (
    "UNITED\nSTATES\nSECURITIES\nAND\nEXCHANGE\nCOMMISSION\nFORM\n8-K\nCURRENT\nREPORT\nPursuant\nto\nSection\n13\n"
    "or\n15(d)\nof\nthe\nSecurities\nExchange\nAct\nof\n1934\nDate\nof\nReport\n(Date\nof\nearliest\nevent\nreported):\n"
    "May\n3,\n2023\nFabrikam,\nInc.\n(Exact\nname\nof\nregistrant\nas\nspecified\nin\nits\ncharter)\n"
    "Ohio 1-4321 31-7654321\n"
)

RELEASE = (
    "NEWS RELEASE\nTailspin Toys Corporation Reports Third Quarter Fiscal Year 2024 Operating Results\n"
    "SEATTLE, May 30, 2024 -- Tailspin Toys Corporation (Nasdaq: TSPN) today announced its operating results "
    "for the third quarter (twelve weeks) of fiscal 2024, ended May 12, 2024.\n"
    "Net sales for the quarter increased 9.1 percent, to $57.4 billion from $52.6 billion last year. "
    "The company expects its growth to continue in the fourth quarter and full year.\n"
)

MANUAL = (
    "AquaPure X200 Owner's Manual\nRead this manual before you install the purifier and keep it for later use.\n"
    "Safety instructions are on page 4. The filter is replaced every six months.\n"
    "© 2021 Aquapure Appliances GmbH. All rights reserved.\n"
)

PAPER = (
    "Learning to Route Questions over Document Trees\nAda Example, Ben Sample\nExample University\n"
    "Abstract\nWe study how questions are routed to the right section of a long document. Our method reads the "
    "outline and the first pages, and it is evaluated on three collections of reports and manuals.\n"
    "1 Introduction\nLong documents are hard to search because the answer to a question is in one of many sections.\n"
)
PAPER_STAMP = "arXiv:2401.01234v2 [cs.CL] 3 Jan 2024\n"


def card_of(*pages: str, file_name: str = "document.pdf", **evidence: object) -> DocumentCard:
    return build_card(CardEvidence(pages=list(pages), file_name=file_name, **evidence))  # type: ignore[arg-type]


def test_an_annual_report_cover_gives_form_issuer_fiscal_year_and_cover_dates() -> None:
    card = card_of(ANNUAL_COVER, CONTENTS, "PART I\nItem 1. Business\n" + FILLER * 5)
    assert card.doc_type is DocType.FORM_10K
    assert card.issuer == "NORTHWIND TRADERS, INC."
    assert (card.period.fiscal_year, card.period.fiscal_quarter, card.period.period_end) == (2019, None, date(2019, 9, 30))
    assert card.dates == [date(2019, 9, 30), date(2019, 3, 29), date(2019, 11, 8)]
    assert card.language == "en"
    assert card.sources["doc_type"] == card.sources["issuer"] == card.sources["period"] == CardSource.COVER


def test_a_quarterly_report_gives_its_quarter_from_the_statement_columns() -> None:
    card = card_of(QUARTERLY_COVER, QUARTERLY_CONTENTS)
    assert card.doc_type is DocType.FORM_10Q
    assert card.issuer == "Contoso Holdings plc"
    assert (card.period.fiscal_year, card.period.fiscal_quarter, card.period.period_end) == (2022, 3, date(2022, 10, 1))


def test_a_quarterly_report_whose_first_pages_name_no_quarter_reads_it_from_its_statements() -> None:
    front = [QUARTERLY_COVER, "Contoso Holdings plc\nTABLE OF CONTENTS\nPART I\nItem 1. Financial Statements 4\n"]
    statements = "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS\nThree Months Ended Nine Months Ended\nRevenue 12 10\n"
    card = card_of(*front, FILLER * 3, statements)
    assert (card.period.fiscal_year, card.period.fiscal_quarter) == (2022, 3)
    # Without statement columns, a quarter of the same year in the file name tells it.
    assert card_of(*front, file_name="contoso-2022Q3-10q.pdf").period.fiscal_quarter == 3
    assert card_of(*front, file_name="contoso-2019Q1-10q.pdf").period.fiscal_quarter is None


def test_a_current_report_set_a_word_a_line_gives_form_issuer_and_report_date() -> None:
    card = card_of(CURRENT_REPORT, file_name="fabrikam-8k.pdf")
    assert card.doc_type is DocType.FORM_8K
    assert card.issuer == "Fabrikam, Inc."
    assert card.dates == [date(2023, 5, 3)]
    # A report date is not a reporting period, and the file name names no year.
    assert card.period.is_empty() and "period" not in card.sources


def test_a_year_in_the_file_name_fills_a_period_the_cover_does_not_name() -> None:
    card = card_of(CURRENT_REPORT, file_name="Fabrikam_2023_8K_dated-2023-05-05.pdf")
    assert card.period.fiscal_year == 2023 and card.sources["period"] == CardSource.FILE_NAME
    quarterly = card_of("Notes to the accounts follow.", file_name="results-2022Q3.pdf")
    assert (quarterly.period.fiscal_year, quarterly.period.fiscal_quarter) == (2022, 3)


def test_an_earnings_release_gives_its_announcer_quarter_and_named_fiscal_year() -> None:
    card = card_of(RELEASE, cover_title="Tailspin Toys Corporation Reports Third Quarter Fiscal Year 2024 Operating Results")
    assert card.doc_type is DocType.EARNINGS_RELEASE
    assert card.issuer == "Tailspin Toys Corporation"
    assert (card.period.fiscal_year, card.period.fiscal_quarter) == (2024, 3)
    assert card.dates == [date(2024, 5, 30), date(2024, 5, 12)]


def test_a_release_without_a_headline_verb_names_its_issuer_before_the_ticker() -> None:
    dateline = (
        "Exhibit 99.1\nFinancial results\nDENVER, Colorado, February 8, 2023 – Contoso Resorts Ltd (NYSE: CRL) "
        "(“Contoso” or the “Company”) today reported financial results for the quarter and year ended "
        "December 31, 2022.\n"
    )
    card = card_of(dateline)
    assert card.doc_type is DocType.EARNINGS_RELEASE and card.issuer == "Contoso Resorts Ltd"
    assert (card.period.fiscal_year, card.period.fiscal_quarter) == (2022, 4)
    aliased = card_of("SEATTLE, May 1, 2024 (GLOBE NEWSWIRE) -- Northwind Traders Inc. (“Northwind”)\n"
                      "(Nasdaq: NWT) today announced its results for the quarter.")
    assert aliased.issuer == "Northwind Traders Inc."


def test_a_manual_gives_its_product_and_its_maker() -> None:
    card = card_of(MANUAL, cover_title="AquaPure X200 Owner's Manual")
    assert card.doc_type is DocType.MANUAL
    assert card.subject == "AquaPure X200"
    assert card.issuer == "Aquapure Appliances GmbH"
    assert card.period.is_empty()


def test_a_paper_is_known_by_its_abstract_and_introduction_or_its_arxiv_stamp() -> None:
    assert card_of(PAPER).doc_type is DocType.PAPER
    assert card_of(PAPER_STAMP + "Some title\nText of the first page.").doc_type is DocType.PAPER


def test_short_landscape_pages_are_slides() -> None:
    pages = ["Quarterly review\nAgenda", "Growth drivers\n• New markets\n• Pricing", "Outlook\nQuestions"]
    wide = [(960.0, 540.0)] * 3
    assert card_of(*pages, page_sizes=wide).doc_type is DocType.SLIDES
    assert card_of(*pages, page_sizes=[(612.0, 792.0)] * 3).doc_type is DocType.UNKNOWN
    card = card_of(*pages, metadata={"Creator": "Microsoft PowerPoint"})
    assert card.doc_type is DocType.SLIDES and card.sources["doc_type"] == CardSource.METADATA


def test_metadata_and_outline_speak_when_the_cover_does_not() -> None:
    card = card_of(
        "Welcome.\nThis document describes the device.", metadata={"Title": "Contoso Router Setup Guide",
                                                                  "Author": "Contoso Networks Ltd",
                                                                  "Subject": "Contoso R7 router"},
    )
    assert card.title == "Contoso Router Setup Guide" and card.sources["title"] == CardSource.METADATA
    assert card.doc_type is DocType.GUIDE and card.sources["doc_type"] == CardSource.METADATA
    assert card.issuer == "Contoso Networks Ltd" and card.sources["issuer"] == CardSource.METADATA
    assert card.subject == "Contoso R7 router"
    outlined = card_of("Welcome.", outline_titles=["Preface", "Service manual for the pump", "Index"])
    assert outlined.doc_type is DocType.MANUAL and outlined.sources["doc_type"] == CardSource.OUTLINE


def test_a_person_or_a_tool_as_metadata_author_is_no_issuer() -> None:
    for author in ("anonymous", "Jane Smith", "Kaleidoscope - kscope.io"):
        assert card_of("Some text.", metadata={"Author": author}).issuer == ""


def test_text_with_no_signals_gives_an_empty_card() -> None:
    card = card_of("We met on the hill.\nThe sheep were counted twice and then once more.", file_name="notes.pdf")
    assert card == DocumentCard(title="We met on the hill.", sources={"title": CardSource.COVER})


def test_a_type_word_inside_a_sentence_names_no_type() -> None:
    text = "Minutes of the meeting\nThe treasurer will report on the budget and hand out the manual for new members.\n"
    assert card_of(text).doc_type is DocType.UNKNOWN
    assert card_of("Annual Report 2022\n" + text).doc_type is DocType.ANNUAL_REPORT


def test_only_the_first_pages_are_read_for_what_the_document_is() -> None:
    late = "FORM 10-K\nFor the fiscal year ended December 31, 2020\n"
    pages = ["Some introduction."] * CARD_PAGES + [late]
    card = card_of(*pages)
    assert card.doc_type is DocType.UNKNOWN and card.period.is_empty()


def test_a_filing_is_titled_by_its_issuer_form_and_period_not_by_the_commission_heading() -> None:
    # A prescribed cover's largest text is the same on every filing: it cannot name this one.
    cover = "UNITED STATES SECURITIES AND EXCHANGE COMMISSION\n" + ANNUAL_COVER.split("\n", 2)[2].replace("☒", "[X]").replace("☐", "[ ]")
    body = "PART I\nItem 1. Business\n" + FILLER * 5
    record = index_document(lines_pdf([cover, CONTENTS, body], cover_heading_pt=18), "nwt-10k.pdf").record
    assert record.card is not None and record.card.title == "UNITED STATES SECURITIES AND EXCHANGE COMMISSION"
    assert record.title == "NORTHWIND TRADERS, INC. — 10-K — FY2019, ended 2019-09-30"


def test_a_document_without_a_prescribed_cover_keeps_its_covers_title() -> None:
    manual = card_of(MANUAL, cover_title="AquaPure X200 Owner's Manual")
    assert manual.display_title() == "AquaPure X200 Owner's Manual"
    release = card_of(RELEASE, cover_title="Tailspin Toys Corporation Reports Third Quarter Fiscal Year 2024 Operating Results")
    assert release.display_title() == release.title
    # A form whose issuer was not read keeps the cover's words rather than a bare "10-K — FY2019".
    unnamed = DocumentCard(title="FORM 10-K", doc_type=DocType.FORM_10K)
    assert unnamed.display_title() == "FORM 10-K"
