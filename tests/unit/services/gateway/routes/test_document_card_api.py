"""`GET /v1/documents/{id}` shows the document's card; the listing carries its short form (issuer,
type, period) and leaves out the page labels, which can run to thousands of entries per document.

The app runs without its lifespan (no Kafka, no MongoDB): the API description and the response
bodies need neither."""

from __future__ import annotations

from datetime import date
from typing import Any

from services.gateway.app import create_app
from services.gateway.schemas import DocumentDetailOut, ListedDocumentOut
from shared.model.card import CardSource, DocType, DocumentCard, DocumentPeriod
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.settings import Settings

SPEC: dict[str, Any] = create_app(
    Settings(kafka_bootstrap="127.0.0.1:1", mongo_url="mongodb://127.0.0.1:1/", auth="off")
).openapi()


def _response_schema(path: str) -> dict[str, Any]:
    content = SPEC["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    ref = content.get("$ref") or content["items"]["$ref"]
    schema: dict[str, Any] = SPEC["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    return schema


def test_one_document_is_described_with_its_card_and_the_listing_with_its_short_form() -> None:
    assert "card" in _response_schema("/v1/documents/{doc_id}")["properties"]
    assert "card" in _response_schema("/v1/documents")["properties"]
    listed = SPEC["components"]["schemas"]["ListedCard"]["properties"]
    assert {"issuer", "doc_type", "period"} <= set(listed) and "page_labels" not in listed
    card_schema = SPEC["components"]["schemas"]["DocumentCard"]["properties"]
    assert {"issuer", "doc_type", "period", "page_labels", "sources"} <= set(card_schema)


def test_a_documents_card_reaches_the_response_as_stored() -> None:
    card = DocumentCard(
        issuer="Northwind Traders, Inc.", doc_type=DocType.FORM_10K,
        period=DocumentPeriod(fiscal_year=2019, period_end=date(2019, 9, 30), years=[2019]),
        page_labels=["", "1"], sources={"doc_type": CardSource.COVER},
    )
    record = DocumentRecord(doc_id="a" * 16, file_name="northwind.pdf", status=DocumentStatus.READY, card=card)
    body = DocumentDetailOut.of(record).model_dump(mode="json")
    assert body["card"]["doc_type"] == "10-K" and body["card"]["issuer"] == "Northwind Traders, Inc."
    assert body["card"]["period"] == {"fiscal_year": 2019, "fiscal_quarter": None, "period_end": "2019-09-30",
                                      "years": [2019]}
    assert body["card"]["sources"] == {"doc_type": "cover"}
    listed = ListedDocumentOut.of(record).model_dump(mode="json")["card"]
    assert listed == {"title": "", "issuer": "Northwind Traders, Inc.", "subject": "", "doc_type": "10-K",
                      "period": body["card"]["period"]}
    older = DocumentRecord(doc_id="b" * 16, file_name="older.pdf", status=DocumentStatus.READY)
    assert DocumentDetailOut.of(older).card is None and ListedDocumentOut.of(older).card is None
