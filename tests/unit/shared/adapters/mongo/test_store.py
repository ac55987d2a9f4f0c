"""A record's card as the MongoDB store writes and reads it (a JSON-mode document: dates as
ISO strings, enums as their values), and a record written before cards still reads."""

from __future__ import annotations

from datetime import date

from shared.adapters.mongo.store import _record_doc, _record_from
from shared.model.card import CardSource, DocType, DocumentCard, DocumentPeriod
from shared.model.documents import DocumentRecord, DocumentStatus


def test_a_card_survives_the_mongo_document_form() -> None:
    card = DocumentCard(
        issuer="Northwind Traders, Inc.", doc_type=DocType.FORM_8K, dates=[date(2023, 5, 3)],
        period=DocumentPeriod(fiscal_year=2023, years=[2023]), page_labels=["i", "1"],
        sources={"doc_type": CardSource.COVER, "period": CardSource.FILE_NAME},
    )
    record = DocumentRecord(doc_id="c" * 16, file_name="northwind-8k.pdf", status=DocumentStatus.READY, card=card)
    stored = _record_doc(record)
    assert stored["card"]["dates"] == ["2023-05-03"] and stored["card"]["sources"]["period"] == "file name"
    assert _record_from(stored) == record


def test_a_mongo_record_without_a_card_still_reads() -> None:
    stored = _record_doc(DocumentRecord(doc_id="d" * 16, file_name="older.pdf"))
    stored.pop("card")
    assert _record_from(stored).card is None
