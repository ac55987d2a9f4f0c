"""Document cards, measured on the financebench filings: how often the card names the form and
the fiscal year the file name gives, whether it names an issuer, and what it costs per document.

The file names (`COMPANY_2018_10K.pdf`, `COMPANY_2023Q2_10Q.pdf`, `COMPANY_2023_8K_dated-….pdf`,
`COMPANY_2022Q4_EARNINGS.pdf`) are the ground truth here only; the card builder reads a file
name as any other (a year, a form token). A disagreement is listed with both readings: some file
names count a fiscal year by another convention than the cover's end date, and a few name
another form than the document holds.

    python -m bench.card_accuracy   ->  bench/results/card_accuracy.json
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench.common import configure_bench_logging, percentile, shared_data, write_result
from services.indexer.card import card_of_content
from services.indexer.extract import extract_content, open_document
from services.indexer.furniture import find_furniture
from shared.model.card import DocType, DocumentCard

_NAMED = re.compile(r"^[A-Za-z]+_(?P<year>\d{4})(?:Q(?P<quarter>[1-4]))?_(?P<form>10K|10Q|8K|EARNINGS)", re.I)
FORMS = {"10K": DocType.FORM_10K, "10Q": DocType.FORM_10Q, "8K": DocType.FORM_8K, "EARNINGS": DocType.EARNINGS_RELEASE}


class NamedFiling(BaseModel):
    """What a financebench file name says."""

    doc_type: DocType
    year: int
    quarter: int | None


def named_filing(file_name: str) -> NamedFiling | None:
    match = _NAMED.match(file_name)
    if match is None:
        return None
    quarter = int(match["quarter"]) if match["quarter"] else None
    return NamedFiling(doc_type=FORMS[match["form"].upper()], year=int(match["year"]), quarter=quarter)


class CardRow(BaseModel):
    file_name: str
    named: NamedFiling
    card: DocumentCard
    card_ms: float
    read_ms: float

    @property
    def type_agrees(self) -> bool:
        return self.card.doc_type is self.named.doc_type

    @property
    def year_agrees(self) -> bool:
        return self.card.period.fiscal_year == self.named.year


def read_cards(folder: Path) -> list[CardRow]:
    """The card of every named filing in `folder`, as the indexer computes it."""
    rows: list[CardRow] = []
    for path in sorted(folder.glob("*.pdf")):
        named = named_filing(path.name)
        if named is None:
            continue
        started = time.perf_counter()
        pdf = open_document(path.read_bytes(), 10_000)
        try:
            content = extract_content(pdf, with_layout=False)
        finally:
            pdf.close()
        furniture = find_furniture(content.pages)
        read = time.perf_counter()
        card = card_of_content(content, furniture, path.name)
        done = time.perf_counter()
        rows.append(CardRow(file_name=path.name, named=named, card=card,
                            card_ms=(done - read) * 1000, read_ms=(read - started) * 1000))
    return rows


def _share(rows: list[CardRow], hit: Any) -> float:
    return round(sum(1 for row in rows if hit(row)) / len(rows), 3) if rows else 0.0


def summarise(rows: list[CardRow]) -> dict[str, Any]:
    by_form: dict[str, dict[str, Any]] = {}
    for form in FORMS.values():
        of_form = [row for row in rows if row.named.doc_type is form]
        by_form[form.value] = {
            "documents": len(of_form),
            "doc_type_agrees": _share(of_form, lambda r: r.type_agrees),
            "fiscal_year_agrees": _share(of_form, lambda r: r.year_agrees),
        }
    quartered = [row for row in rows if row.named.quarter is not None and row.named.doc_type is not DocType.FORM_8K]
    card_ms = [row.card_ms for row in rows]
    return {
        "documents": len(rows),
        "has_doc_type": _share(rows, lambda r: r.card.doc_type is not DocType.UNKNOWN),
        "doc_type_agrees": _share(rows, lambda r: r.type_agrees),
        "has_fiscal_year": _share(rows, lambda r: r.card.period.fiscal_year is not None),
        "fiscal_year_agrees": _share(rows, lambda r: r.year_agrees),
        "fiscal_year_from_cover": _share(rows, lambda r: r.card.sources.get("period") == "cover"),
        "quarter_agrees": _share(quartered, lambda r: r.card.period.fiscal_quarter == r.named.quarter),
        "has_issuer": _share(rows, lambda r: bool(r.card.issuer)),
        "has_page_labels": _share(rows, lambda r: bool(r.card.page_labels)),
        "by_form": by_form,
        "card_ms": {"mean": round(sum(card_ms) / len(card_ms), 2), "p95": round(percentile(card_ms, 95), 2),
                    "max": round(max(card_ms), 2)} if card_ms else {},
        "read_ms_mean": round(sum(r.read_ms for r in rows) / len(rows), 1) if rows else 0.0,
    }


def disagreements(rows: list[CardRow]) -> list[dict[str, Any]]:
    return [
        {"file_name": row.file_name, "card_type": row.card.doc_type.value, "card_fiscal_year": row.card.period.fiscal_year,
         "card_period_end": str(row.card.period.period_end) if row.card.period.period_end else None,
         "period_source": str(row.card.sources.get("period", ""))}
        for row in rows if not (row.type_agrees and row.year_agrees)
    ]


def main() -> None:
    configure_bench_logging()
    rows = read_cards(shared_data() / "pdfs" / "financebench")
    result = write_result("card_accuracy", {"summary": summarise(rows), "disagreements": disagreements(rows)})
    print(result["summary"])
    for row in result["disagreements"]:
        print(" ", row)


if __name__ == "__main__":
    main()
