"""An answer citing a document deleted while it was computed is not served: not by the gateway
that deleted it, not by another that learnt of the deletion from `document.deleted`, and not
from the stored query either; answers citing other documents are served as before."""

from __future__ import annotations

from services.gateway.withdrawn import RecentDeletions
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.events import QueryReceived
from shared.model.query import Citation
from shared.model.query_records import QueryRecord, QueryStatus
from tests.support.gateway.fake_gateway import FakeGateway, supported, verified


def _fake() -> FakeGateway:
    fake = FakeGateway()
    for doc_id in ("valves", "pumps"):
        fake.store.documents[doc_id] = DocumentRecord(doc_id=doc_id, file_name=f"{doc_id}.pdf", page_count=2,
                                                      status=DocumentStatus.READY, tenant=fake.settings.tenant)

    def answer(event: QueryReceived):  # type: ignore[no-untyped-def]
        cited = Citation(doc_id="valves", file_name="valves.pdf", node_id="0001", pages=[2])
        return verified(event, "The valve opens at 111 bar. [valves.pdf, p. 2]",
                        supported(["The valve opens at 111 bar."], cited), [cited])

    fake.answer_with(answer)
    return fake


def test_an_answer_citing_a_document_deleted_meanwhile_is_a_failure_that_says_to_ask_again() -> None:
    fake = _fake()
    with fake.client() as client:
        before = client.post("/v1/query", json={"question": "At what pressure does the valve open?"})
        assert before.status_code == 200 and "111 bar" in before.json()["answer"]
        # The answer of a query asked before the deletion arrives after DELETE returned.
        fake.bus.answer_after_s = 0.3
        assert client.delete("/v1/documents/valves").status_code == 200
        # A query past the navigator when the deletion started stores its answer afterwards.
        stored_answer = verified(QueryReceived(query_id="q-late", question="Valve pressure?"), "111 bar.",
                                 citations=[Citation(doc_id="valves", file_name="valves.pdf", node_id="0001", pages=[2])])
        fake.queries.results["q-late"] = QueryRecord(query_id="q-late", status=QueryStatus.ANSWERED,
                                                     outcome=stored_answer.outcome, tenant=fake.settings.tenant)
        late = client.post("/v1/query", json={"question": "At what pressure does the valve open?",
                                              "doc_ids": ["pumps"]})
        assert late.status_code == 502, late.text
        body = late.json()
        assert body["status"] == "failed" and "valves was deleted while the question was answered" in body["reason"]
        assert "111 bar" not in late.text
        # Stored after the deletion's background removal ran: not served either.
        stored = client.get("/v1/queries/q-late")
        assert stored.status_code == 200 and stored.json()["status"] == "failed" and "111 bar" not in stored.text


def test_a_deletion_another_gateway_made_is_learnt_and_expires_after_the_longest_query() -> None:
    now = [0.0]
    deleted = RecentDeletions(keep_s=600.0, clock=lambda: now[0])
    cited = Citation(doc_id="valves", file_name="valves.pdf", node_id="0001", pages=[2])
    event = verified(QueryReceived(query_id="q1", question="Valve pressure?"), "111 bar.", citations=[cited])
    record = QueryRecord(query_id="q1", status=QueryStatus.ANSWERED, outcome=event.outcome)
    assert deleted.withdrawn(record) == record
    deleted.note("valves")  # as `document.deleted` from another replica tells it
    assert deleted.withdrawn(record).status == QueryStatus.FAILED  # type: ignore[union-attr]
    assert deleted.withdrawn(None) is None
    now[0] = 601.0
    assert deleted.withdrawn(record) == record  # no query started before it can still be answered
