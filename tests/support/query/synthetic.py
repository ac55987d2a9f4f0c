"""Small generated collections for the ranking and cross-validation tests: manuals open with a
contents page that names every section (it matches every question and answers none), then one
page per section holding one fact; filings open with a cover naming the company and the fiscal
year, and share every other word."""

from __future__ import annotations

from services.navigator.index import DocumentIndex
from shared.model.card import DocType, DocumentCard, DocumentPeriod
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build
from treerag.evaluation.dataset import QAItem

MACHINES = ("pump", "valve", "boiler", "fan", "turbine", "compressor")
DISHES = ("bread", "pie", "cake", "tart", "scone", "bun")


def _document(doc_id: str, name: str, topics: tuple[str, ...], fact: str) -> DocumentIndex:
    contents = "Contents\n" + "\n".join(f"{k + 1} The {t} ........ {k + 2}" for k, t in enumerate(topics))
    pages = [contents] + [f"{k + 1} The {t}\n{fact.format(topic=t, n=10 + 7 * k)} {FILLER}"
                          for k, t in enumerate(topics)]
    nodes = [node("0000", "Contents", 1, 1)] + [
        node(f"{k + 1:04d}", f"{k + 1} The {t}", k + 2, k + 2) for k, t in enumerate(topics)
    ]
    return build(indexed(doc_id, name, pages, nodes))


def plant_collection(documents: int = 4) -> tuple[list[QAItem], dict[str, DocumentIndex]]:
    items, indexes = [], {}
    for d in range(documents):
        name = f"plant-{d}.pdf"
        indexes[name] = _document(f"{d:016x}", name, MACHINES, "Each {topic} is serviced every {n} hours by the crew.")
        items += [QAItem(id=f"p{d}-{k}", doc=name, question=f"How often is the {t} serviced by the crew?",
                         answer=str(10 + 7 * k), evidence_pages=[k + 2]) for k, t in enumerate(MACHINES)]
    return items, indexes


def kitchen_collection(documents: int = 4) -> tuple[list[QAItem], dict[str, DocumentIndex]]:
    items, indexes = [], {}
    for d in range(documents):
        name = f"kitchen-{d}.pdf"
        indexes[name] = _document(f"{d + 100:016x}", name, DISHES, "The {topic} is baked at {n}0 degrees in the oven.")
        items += [QAItem(id=f"k{d}-{k}", doc=name, question=f"At what temperature is the {t} baked in the oven?",
                         answer=f"{10 + 7 * k}0", evidence_pages=[k + 2]) for k, t in enumerate(DISHES)]
    return items, indexes


def filing(company: str, year: int, turnover: str) -> DocumentIndex:
    """An annual report: its cover names the company and the fiscal year; page 4 holds the
    inventory turnover, naming the company but not the year; the other pages of every filing
    use the same words. Only the cover tells two years of one company apart."""
    pages = [
        f"{company} Holdings. Annual report. For the fiscal year ended December 31, {year}. Form 10-K.",
        f"Table of contents. Business. Risk factors. Financial statements. {FILLER}",
        f"The company designs and sells footwear through retailers. {FILLER}",
        f"{company} inventory turnover was {turnover} times in the year. Inventories are stated at cost.",
        f"Revenue grew as retailers restocked. {FILLER}",
    ]
    nodes = [node("0001", "Cover", 1, 2), node("0002", "Business", 3, 3), node("0003", "Statements", 4, 5)]
    doc_id = f"{company.lower()}{year}".ljust(16, "0")[:16]
    document = indexed(doc_id, f"{company.lower()}_{year}.pdf", pages, nodes)
    # The card the indexer reads off such a cover.
    document.record.card = DocumentCard(issuer=f"{company} Holdings", doc_type=DocType.FORM_10K,
                                        period=DocumentPeriod(fiscal_year=year, years=[year]))
    return build(document)


def turnover_question(company: str, year: int) -> str:
    return f"What was {company}'s FY{year} inventory turnover?"


def filings_collection(
    companies: tuple[str, ...], years: tuple[int, ...]
) -> tuple[list[QAItem], dict[str, DocumentIndex]]:
    """One filing per company and year, one question each (its answer on page 4)."""
    items, indexes = [], {}
    for k, company in enumerate(companies):
        for year in years:
            index = filing(company, year, f"{3 + k}.{year % 10}")
            indexes[index.label] = index
            items.append(QAItem(id=f"f-{company}-{year}", doc=index.label, question=turnover_question(company, year),
                                answer=f"{3 + k}.{year % 10}", evidence_pages=[4]))
    return items, indexes
