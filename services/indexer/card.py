"""A document's card (shared/model/card.py) from what indexing has already read: the text of
the first pages, the metadata, the outline titles, the file name, the page shapes and the page
labels. Pure and cheap: only the first `CARD_PAGES` pages are read for text signals (an interim
report naming no quarter there, its first `STATEMENT_PAGES` for the statements' column heads;
the page edges of every page for printed page numbers).

Each field is read from the strongest source that has it, in this order: the cover (the
document says so itself), the metadata, the outline, the page layout, the file name. A field no
source speaks to stays empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath

from services.indexer.extract import PdfContent
from services.indexer.furniture import content_lines
from services.indexer.page_labels import footer_page_labels
from shared.model.card import CardSource, DocType, DocumentCard, DocumentPeriod
from shared.text.language import document_language
from shared.text.organisations import LEGAL_FORM
from shared.text.periods import document_period, find_dates, year_to_date_quarter

# The cover and what follows it: a filing's cover and contents, a release's headline and first
# paragraphs, a paper's abstract. Later pages talk about other periods and other documents.
CARD_PAGES = 3
# Characters of each page read for text signals: a cover page holds fewer, a dense page more.
_PAGE_CHARS = 6000
# An interim report whose cover names no quarter prints it in its statements' column heads
# ("Three Months Ended ... Six Months Ended"), which follow the cover and contents.
STATEMENT_PAGES = 10


@dataclass(frozen=True, slots=True)
class CardEvidence:
    """What the card is built from, all of it already read by the indexer."""

    pages: list[str]
    file_name: str
    metadata: dict[str, str] = field(default_factory=dict)  # Title, Author, Subject, Keywords, Creator, Producer
    outline_titles: list[str] = field(default_factory=list)
    cover_title: str = ""  # the largest text on the first page
    furniture: frozenset[str] = frozenset()
    pdf_labels: list[str] = field(default_factory=list)  # /PageLabels; [] when the PDF has none
    page_sizes: list[tuple[float, float]] = field(default_factory=list)  # (width, height) of the first pages
    printed: bool = True  # False for DOCX, HTML, Markdown and text: no printed page numbers


_FILE_LIKE_TITLE = re.compile(
    r"\.(dvi|docx?|pptx?|xlsx?|rtf|tex|indd|qxd|pdf)$|^microsoft (word|powerpoint) - |^untitled", re.I
)


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def document_title(evidence: CardEvidence) -> tuple[str, CardSource | None]:
    """The largest text on the first page, else the metadata title when it reads like one,
    else the first line of the first page; ('', None) when there is none."""
    if evidence.cover_title:
        return evidence.cover_title, CardSource.COVER
    meta = " ".join(evidence.metadata.get("Title", "").split())
    if _letters(meta) >= 3 and not _FILE_LIKE_TITLE.search(meta):
        return meta, CardSource.METADATA
    first = content_lines(evidence.pages[0], evidence.furniture)[:1] if evidence.pages else []
    return (first[0][:120], CardSource.COVER) if first else ("", None)


# --- document type -------------------------------------------------------------------------

# An SEC cover names its form on a line of its own ("FORM 10-K", "Form 10-Q/A"); the same
# words inside a sentence ("our Annual Report on Form 10-K") refer to another document.
_SEC_FORM_LINE = re.compile(
    r"^\s*FORM\s+(?P<form>10-K(?:405|T)?|10-Q(?:T)?|8-K|20-F|40-F)(?:/A)?\b[^a-z\n]{0,40}$", re.I | re.M
)
_SEC_FORMS = {
    "10-K": DocType.FORM_10K, "10-K405": DocType.FORM_10K, "10-KT": DocType.FORM_10K,
    "10-Q": DocType.FORM_10Q, "10-QT": DocType.FORM_10Q, "8-K": DocType.FORM_8K,
    "20-F": DocType.ANNUAL_REPORT, "40-F": DocType.ANNUAL_REPORT,
}
_SEC_REPORT_PHRASES = (
    (re.compile(r"\bANNUAL\s+REPORT\s+PURSUANT\s+TO\s+SECTION\s+13\s+OR\s+15\s*\(d\)", re.I), DocType.FORM_10K),
    (re.compile(r"\bQUARTERLY\s+REPORT\s+PURSUANT\s+TO\s+SECTION\s+13\s+OR\s+15\s*\(d\)", re.I), DocType.FORM_10Q),
    (re.compile(r"\bCURRENT\s+REPORT\s+Pursuant\s+to\s+Section\s+13\s+or\s+15\s*\(d\)", re.I), DocType.FORM_8K),
    (re.compile(r"\bSCHEDULE\s+14A\b|\bPROXY\s+STATEMENT\s+PURSUANT\s+TO\s+SECTION\s+14\s*\(a\)|\bDEF\s+14A\b", re.I),
     DocType.PROXY_STATEMENT),
)
# Headline words of a results announcement: "X Reports First-Quarter 2023 Results",
# "X Announces Fourth Quarter Earnings", "... today reported results for ...".
_RESULTS_HEADLINE = re.compile(
    r"\b(?:reports?|reported|announces?|announced|posts?|delivers?)\b[^.\n]{0,100}?\b(?:results|earnings)\b", re.I
)
_RESULTS_SENTENCE = re.compile(
    r"\btoday\s+(?:reported|announced)\b[^.]{0,160}?\b(?:results|earnings)\b", re.I
)
_PROXY_TITLE = re.compile(r"\bproxy\s+statement\b|\bnotice\s+of\s+(?:the\s+)?annual\s+(?:general\s+)?meeting\b", re.I)
_ANNUAL_REPORT_TITLE = re.compile(r"\bannual\s+report\b|\bintegrated\s+report\b", re.I)
_APOSTROPHE = r"['’]?"
_MANUAL_TITLE = re.compile(
    rf"\b(?:owner{_APOSTROPHE}s?|users?{_APOSTROPHE}s?|operator{_APOSTROPHE}s?|instruction|service|reference|"
    rf"installation|operating|maintenance|repair|technical|product)\s+manual\b|\bmanual\b|\boperating\s+instructions\b"
    r"|\binstructions\s+for\s+use\b",
    re.I,
)
_GUIDE_TITLE = re.compile(r"\bguide\b|\bhandbook\b|\bdocumentation\b|\btutorial\b|\bcookbook\b", re.I)
_BROCHURE_TITLE = re.compile(r"\bbrochure\b|\bcatalog(?:ue)?\b|\bdatasheet\b|\bdata\s+sheet\b|\bspecifications\b", re.I)
_REPORT_TITLE = re.compile(r"\breport\b|\bwhite\s*paper\b", re.I)
_ARXIV = re.compile(r"\barXiv:\s?\d{4}\.\d{4,5}(?:v\d+)?\b", re.I)
_ABSTRACT_LINE = re.compile(r"^\s*(?:a\s*b\s*s\s*t\s*r\s*a\s*c\s*t|abstract)\b", re.I | re.M)
_INTRODUCTION_LINE = re.compile(r"^\s*(?:1\.?|I\.)?\s*introduction\s*$", re.I | re.M)
_SLIDE_SOFTWARE = re.compile(r"powerpoint|keynote|impress|google slides|beamer", re.I)

# File-name tokens that name a document type: "…_10K.pdf", "q2-earnings.pdf", "owners-manual.pdf".
_FILE_NAME_TYPES = (
    (re.compile(r"^10-?k(?:405)?$"), DocType.FORM_10K),
    (re.compile(r"^10-?q$"), DocType.FORM_10Q),
    (re.compile(r"^8-?k$"), DocType.FORM_8K),
    (re.compile(r"^(?:earnings|results)$"), DocType.EARNINGS_RELEASE),
    (re.compile(r"^(?:proxy|def14a)$"), DocType.PROXY_STATEMENT),
    (re.compile(r"^(?:manual|handbook)$"), DocType.MANUAL),
    (re.compile(r"^(?:guide|userguide)$"), DocType.GUIDE),
    (re.compile(r"^e?brochure$"), DocType.BROCHURE),
    (re.compile(r"^(?:slides|deck|presentation)$"), DocType.SLIDES),
)
_TITLE_LINE_WORDS = 10
# A slide is wider than tall and holds little text.
_LANDSCAPE = 1.2
_SLIDE_CHARS = 700


def _head_lines(text: str, count: int = 15) -> str:
    return "\n".join([ln for ln in text.split("\n") if ln.strip()][:count])


def _cover_type(cover: str, first_pages: str, title: str) -> DocType | None:
    """The type a document's first pages say it is, most specific form first."""
    form = _SEC_FORM_LINE.search(first_pages)
    if form:
        return _SEC_FORMS[form["form"].upper()]
    for phrase, doc_type in _SEC_REPORT_PHRASES:
        if phrase.search(first_pages):
            return doc_type
    head = _head_lines(cover)
    if _RESULTS_HEADLINE.search(head) or _RESULTS_SENTENCE.search(cover):
        return DocType.EARNINGS_RELEASE
    if _ARXIV.search(cover) or (_ABSTRACT_LINE.search(first_pages) and _INTRODUCTION_LINE.search(first_pages)):
        return DocType.PAPER
    # A title is a short line: "report" or "manual" inside a sentence says nothing of the document.
    short = [line for line in head.split("\n") if len(line.split()) <= _TITLE_LINE_WORDS]
    return _title_type("\n".join([title, *short]))


def _title_type(text: str) -> DocType | None:
    """The type a title (or a document's first lines) names."""
    for pattern, doc_type in (
        (_PROXY_TITLE, DocType.PROXY_STATEMENT),
        (_ANNUAL_REPORT_TITLE, DocType.ANNUAL_REPORT),
        (_MANUAL_TITLE, DocType.MANUAL),
        (_GUIDE_TITLE, DocType.GUIDE),
        (_BROCHURE_TITLE, DocType.BROCHURE),
        (_REPORT_TITLE, DocType.REPORT),
    ):
        if pattern.search(text):
            return doc_type
    return None


def _layout_type(evidence: CardEvidence, pages: list[str]) -> DocType | None:
    sizes = [(w, h) for w, h in evidence.page_sizes if w > 0 and h > 0]
    if not sizes or not all(w >= _LANDSCAPE * h for w, h in sizes):
        return None
    lengths = sorted(len(p.strip()) for p in pages)
    return DocType.SLIDES if lengths and lengths[len(lengths) // 2] <= _SLIDE_CHARS else None


def _file_name_tokens(file_name: str) -> list[str]:
    stem = PurePath(file_name).stem.lower()
    return [t for t in re.split(r"[^a-z0-9-]+|(?<=[a-z])-|-(?=[a-z])", stem) if t]


def _file_name_type(file_name: str) -> DocType | None:
    for token in _file_name_tokens(file_name):
        for pattern, doc_type in _FILE_NAME_TYPES:
            if pattern.match(token):
                return doc_type
    return None


# --- issuer and subject --------------------------------------------------------------------

_REGISTRANT_CAPTION = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrants?\s+as\s+specified", re.I)
# What stands before the registrant's name on a cover: the commission file number, a rule, a
# check box; the name is what follows the last of them.
_BEFORE_NAME = re.compile(
    r"commission\s+file\s*:?\s*(?:number|no\.?)\s*:?\s*[\d-]+|_{3,}|-{3,}|[☐☒■□¨]|transition\s+period\s+from[\s_]*to\b", re.I
)
# Small capitals some covers are set in come out as a capital on its own: "H\nOLDINGS I\nNTERNATIONAL".
_SPLIT_CAPITAL = re.compile(r"(?<![A-Za-z])([A-Z])\s*\n\s*(?=[A-Z]{2,})")
_NAME_CHARS = 100
_NAME_WORDS = 12
_ISSUER_VERB = re.compile(
    r"^(?P<name>[A-Z][\w&.,'’\- ]{1,80}?)\s+(?i:reports?|reported|announces?|announced|posts?|delivers?)\b"
)
_ORGANISATION = re.compile(rf"^[A-Z][\w&.,'’\- ]{{1,80}}?\b{LEGAL_FORM}$")
_COPYRIGHT = re.compile(
    rf"(?:©|\(c\)|copyright)\s*(?:\d{{4}}(?:\s*[-–,]\s*\d{{4}})*\s*)?(?:by\s+)?"
    rf"(?P<name>[A-Z][\w&.,'’\- ]{{1,80}}?\b{LEGAL_FORM})(?=[\s.,;]|$)",
    re.I,
)
_PLACEHOLDER_AUTHOR = re.compile(r"^(?:anonymous|unknown|user|admin(?:istrator)?|owner|author|default)$", re.I)
_WEB_ADDRESS = re.compile(r"\b[\w-]+\.(?:com|io|net|org|co)\b|https?://|www\.", re.I)


def _registrant(first_pages: str) -> str:
    """The name printed just above "(Exact name of registrant as specified in its charter)"."""
    caption = _REGISTRANT_CAPTION.search(first_pages)
    if caption is None:
        return ""
    before = first_pages[max(0, caption.start() - 2 * _NAME_CHARS) : caption.start()]
    boundaries = list(_BEFORE_NAME.finditer(before))
    before = before[boundaries[-1].end() :] if boundaries else _last_name_lines(before)
    name = _tidy_name(_SPLIT_CAPITAL.sub(r"\1", before))
    if _letters(name) < 2 or len(name) > _NAME_CHARS or len(name.split()) > _NAME_WORDS:
        return ""
    return name


def _last_name_lines(text: str) -> str:
    """The last line, and the lines above it while the text is set a word a line ("Block,"
    above "Inc."), up to one holding a number, a colon or a parenthesis (a date, a caption)."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    if not lines:
        return ""
    picked = [lines.pop()]
    while lines and len(picked) < _NAME_WORDS and (len(picked[0].split()) == 1 or picked[0].endswith(",")):
        above = lines.pop()
        if re.search(r"[\d:()]", above):
            break
        picked.insert(0, above)
    return " ".join(picked)


def _tidy_name(name: str) -> str:
    # "Acme, Inc ." and "Inc .": a space before a full stop is a typesetting artefact.
    return re.sub(r"\s+\.", ".", " ".join(name.split())).strip(" ,;:")


def _headline_issuer(cover: str, title: str) -> str:
    """The announcer of a results headline: "Northwind Inc. Reports Third Quarter Results"."""
    for line in [title, *_head_lines(cover, 8).split("\n")]:
        match = _ISSUER_VERB.match(line.strip())
        if match and len(match["name"].split()) <= 8 and _RESULTS_HEADLINE.search(line):
            return _tidy_name(match["name"])
    return ""


# A listed company is named before its ticker in a release's dateline: "-- Northwind Inc.
# (“Northwind” or the “Company”) (NYSE: NWT) today reported ...".
_TICKER = re.compile(r"[(\[]\s*(?:NYSE(?:\s+American)?|Nasdaq|NASDAQ|AMEX|LSE|TSX|OTC\w*)\s*:\s*[A-Z.]{1,6}\s*[)\]]")
_TRAILING_ALIAS = re.compile(r"\s*\([^()]{0,80}\)\s*$")
_DATELINE_BREAK = re.compile(r"\s[-–—]{1,2}\s|--|/PRNewswire/|\(GLOBE NEWSWIRE\)|\(BUSINESS WIRE\)|[.;:]\s|\n")


def _ticker_issuer(cover: str) -> str:
    ticker = _TICKER.search(cover)
    if ticker is None:
        return ""
    before = cover[max(0, ticker.start() - 2 * _NAME_CHARS) : ticker.start()].rstrip()
    while (alias := _TRAILING_ALIAS.search(before)) is not None:
        before = before[: alias.start()]
    name = _tidy_name(_DATELINE_BREAK.split(before)[-1])
    if not name[:1].isupper() or len(name.split()) > _NAME_WORDS // 2 or _letters(name) < 2:
        return ""
    return name


def _organisation_author(metadata: dict[str, str]) -> str:
    author = _tidy_name(metadata.get("Author", ""))
    if not author or _PLACEHOLDER_AUTHOR.match(author) or _WEB_ADDRESS.search(author):
        return ""
    return author if _ORGANISATION.match(author) else ""


def _issuer(evidence: CardEvidence, cover: str, first_pages: str, title: str) -> tuple[str, CardSource | None]:
    for name in (_registrant(first_pages), _headline_issuer(cover, title), _ticker_issuer(cover)):
        if name:
            return name, CardSource.COVER
    author = _organisation_author(evidence.metadata)
    if author:
        return author, CardSource.METADATA
    copyright_holder = _COPYRIGHT.search(first_pages)
    if copyright_holder:
        return _tidy_name(copyright_holder["name"]), CardSource.COVER
    return "", None


_SUBJECT_TITLE_WORDS = 8
_PLACEHOLDER_SUBJECT = re.compile(r"^(?:unspecified|none|n/?a|untitled|subject|default)$", re.I)
_TYPE_WORDS = {
    DocType.MANUAL: _MANUAL_TITLE,
    DocType.GUIDE: _GUIDE_TITLE,
    DocType.BROCHURE: _BROCHURE_TITLE,
}


def _subject(
    evidence: CardEvidence, doc_type: DocType, title: str, title_source: CardSource | None
) -> tuple[str, CardSource | None]:
    """The metadata subject when it reads like one; else what a manual's, guide's or brochure's
    title names besides its type ("Model X200 Owner's Manual" is about the Model X200)."""
    subject = _tidy_name(evidence.metadata.get("Subject", ""))
    if (
        _letters(subject) >= 3 and subject.lower() != title.lower()
        and not _WEB_ADDRESS.search(subject) and not _PLACEHOLDER_SUBJECT.match(subject)
    ):
        return subject, CardSource.METADATA
    words = _TYPE_WORDS.get(doc_type)
    # Only a title's few words name a product; a sentence that mentions a manual does not.
    if words is not None and title and len(title.split()) <= _SUBJECT_TITLE_WORDS and words.search(title):
        rest = _tidy_name(re.sub(r"\s+[-–—:|]\s*$|^\s*[-–—:|]\s+", "", words.sub(" ", title)))
        rest = rest.strip(" -–—:|,")
        if _letters(rest) >= 2:
            return rest, title_source
    return "", None


# --- the card ------------------------------------------------------------------------------


def _first_found(*steps: Callable[[], DocType | None]) -> tuple[DocType | None, int]:
    for index, step in enumerate(steps):
        found = step()
        if found is not None:
            return found, index
    return None, -1


def _file_name_period(file_name: str) -> DocumentPeriod:
    """A year ("2019", "FY2019") or a quarter ("2023Q2", "Q2-2023") in a file name; a date
    ("2023-02-21") is a date, not a period."""
    stem = PurePath(file_name).stem
    undated = re.sub(r"(?:19|20)\d\d[-_.](?:0[1-9]|1[0-2])[-_.](?:0[1-9]|[12]\d|3[01])", " ", stem)
    quarter = re.search(r"(?<![A-Za-z0-9])((?:19|20)\d\d)[-_ ]?Q([1-4])(?![0-9])|(?<![A-Za-z0-9])Q([1-4])[-_ ]?((?:19|20)\d\d)(?![0-9])",
                        undated, re.I)
    if quarter:
        year = int(quarter[1] or quarter[4])
        return DocumentPeriod(fiscal_year=year, fiscal_quarter=int(quarter[2] or quarter[3]), years=[year])
    years = re.findall(r"(?<![0-9])((?:19|20)\d\d)(?![0-9])", undated)
    if len(set(years)) == 1:
        return DocumentPeriod(fiscal_year=int(years[0]), years=[int(years[0])])
    return DocumentPeriod()


def _interim_quarter(period: DocumentPeriod, evidence: CardEvidence) -> DocumentPeriod:
    """An interim report's quarter when its first pages do not name it: from the column heads
    of its statements, else from a quarter in its file name of the same fiscal year."""
    quarter = year_to_date_quarter("\n".join(page[:_PAGE_CHARS] for page in evidence.pages[:STATEMENT_PAGES]))
    if quarter is None:
        named = _file_name_period(evidence.file_name)
        if named.fiscal_quarter is not None and named.fiscal_year in (period.fiscal_year, None):
            quarter = named.fiscal_quarter
    return period if quarter is None else period.model_copy(update={"fiscal_quarter": quarter})


def build_card(evidence: CardEvidence) -> DocumentCard:
    """The card of one document; every field empty that no source speaks to."""
    first = [page[:_PAGE_CHARS] for page in evidence.pages[:CARD_PAGES]]
    cover = first[0] if first else ""
    first_pages = "\n".join(first)
    sources: dict[str, CardSource] = {}
    title, title_source = document_title(evidence)
    if title_source:
        sources["title"] = title_source
    meta_text = "\n".join(evidence.metadata.get(key, "") for key in ("Title", "Subject", "Keywords"))
    creator = " ".join(evidence.metadata.get(key, "") for key in ("Creator", "Producer"))
    outline = "\n".join(evidence.outline_titles[:20])

    doc_type, step = _first_found(
        lambda: _cover_type(cover, first_pages, title if title_source is CardSource.COVER else ""),
        lambda: _title_type(meta_text) or (DocType.SLIDES if _SLIDE_SOFTWARE.search(creator) else None),
        lambda: _title_type(outline),
        lambda: _layout_type(evidence, first),
        lambda: _file_name_type(evidence.file_name),
    )
    if doc_type is not None:
        sources["doc_type"] = (
            CardSource.COVER, CardSource.METADATA, CardSource.OUTLINE, CardSource.LAYOUT, CardSource.FILE_NAME
        )[step]

    period = document_period(first_pages)
    if not period.is_empty():
        sources["period"] = CardSource.COVER
    else:
        period = document_period(meta_text)
        if not period.is_empty():
            sources["period"] = CardSource.METADATA
        else:
            period = _file_name_period(evidence.file_name)
            if not period.is_empty():
                sources["period"] = CardSource.FILE_NAME

    if doc_type is DocType.FORM_10Q and period.fiscal_quarter is None:
        period = _interim_quarter(period, evidence)

    issuer, issuer_source = _issuer(evidence, cover, first_pages, title)
    if issuer_source:
        sources["issuer"] = issuer_source
    subject, subject_source = _subject(evidence, doc_type or DocType.UNKNOWN, title, title_source)
    if subject_source:
        sources["subject"] = subject_source
    dates = find_dates(cover)
    if dates:
        sources["dates"] = CardSource.COVER
    language = document_language(first_pages)
    if language:
        sources["language"] = CardSource.COVER
    labels: list[str] = []
    if any(evidence.pdf_labels):
        labels, sources["page_labels"] = list(evidence.pdf_labels), CardSource.LABELS
    elif evidence.printed:
        labels = footer_page_labels(evidence.pages)
        if labels:
            sources["page_labels"] = CardSource.FOOTERS
    return DocumentCard(
        title=title, issuer=issuer, subject=subject, doc_type=doc_type or DocType.UNKNOWN, period=period,
        dates=dates, language=language, page_labels=labels, sources=sources,
    )


def card_of_content(content: PdfContent, furniture: frozenset[str], file_name: str) -> DocumentCard:
    """The card of a document as the indexer read it (a PDF, or a paginated text document)."""
    metadata = content.metadata or ({"Title": content.metadata_title} if content.metadata_title else {})
    return build_card(
        CardEvidence(
            pages=content.pages, file_name=PurePath(file_name).name, metadata=metadata,
            outline_titles=[entry.title for entry in content.outline], cover_title=content.cover_title,
            furniture=furniture, pdf_labels=content.page_labels, page_sizes=content.page_sizes,
            printed=content.printed,
        )
    )
