"""Indexers that die mid-document and indexers that share the work."""

from __future__ import annotations

import time

import pytest
from aiokafka.partitioner import DefaultPartitioner

from shared.model.ids import content_id
from tests.support.integration.pdfs import manual_pdf
from tests.support.integration.stack import Gateway, Stack, wait_until
from tests.support.integration.uploads import upload, wait_document

pytestmark = pytest.mark.integration

PARTITIONS = 6  # the test broker's num.partitions (scripts/infra/kafka.sh): kafka_topic_partitions is unset


def partition_of(doc_id: str) -> int:
    """The partition Kafka's default partitioner puts this document's events on."""
    return DefaultPartitioner()(doc_id.encode(), list(range(PARTITIONS)), list(range(PARTITIONS)))


def test_indexer_killed_mid_document_ends_ready_with_exactly_one_tree(stack: Stack, gateway: Gateway) -> None:
    # 400 pages at 25 ms each: the kill lands well inside the document.
    slow = stack.start_stage("indexer", TREERAG_INDEXER_PAGE_DELAY_MS="25")
    stack.wait_consuming(slow)
    data = manual_pdf(unit=201, pages_per_section=80, sections=5)
    response = upload(gateway, data, "unit-201-big.pdf")
    assert response.status_code == 202, response.text
    doc_id = response.json()["doc_id"]

    wait_document(gateway, doc_id, statuses=("indexing",), timeout_s=120)
    time.sleep(1.0)
    slow.kill()
    stack.stop(slow)
    killed = gateway.get(f"/v1/documents/{doc_id}", timeout=10).json()
    assert killed["status"] == "indexing", "the kill should land before the document is finished"
    client = stack.mongo()
    try:
        trees = client[stack.db_name]["trees"]
        assert trees.count_documents({"doc_id": doc_id}) == 0

        restarted = stack.start_stage("indexer")
        stack.wait_consuming(restarted)
        document = wait_document(gateway, doc_id, timeout_s=180)
        assert document["status"] == "ready", document
        assert document["page_count"] == 400
        assert trees.count_documents({"doc_id": doc_id}) == 1
        last = gateway.get(f"/v1/documents/{doc_id}/pages/400", timeout=10)
        assert last.status_code == 200 and last.json()["text"]
        assert gateway.get(f"/v1/documents/{doc_id}/pages/401", timeout=10).status_code == 404
        # The crash counted as one attempt, and the bookkeeping was cleared after success.
        assert client[stack.db_name]["delivery_attempts"].count_documents({}) == 0
        stack.stop(restarted)
    finally:
        client.close()


def pdfs_covering_every_partition() -> list[tuple[int, bytes]]:
    """Six manuals whose doc ids land on six different partitions, so each indexer of the group
    gets work whatever partitions the group coordinator hands it."""
    chosen: dict[int, tuple[int, bytes]] = {}
    unit = 300
    while len(chosen) < PARTITIONS:
        data = manual_pdf(unit=unit, pages_per_section=4)
        chosen.setdefault(partition_of(content_id(data)), (unit, data))
        unit += 1
    return list(chosen.values())


def test_two_indexers_in_one_group_share_partitions_and_index_6_pdfs_once(
    stack: Stack, gateway: Gateway
) -> None:
    first = stack.start_stage("indexer", TREERAG_INDEXER_PAGE_DELAY_MS="20")
    second = stack.start_stage("indexer", TREERAG_INDEXER_PAGE_DELAY_MS="20")
    stack.wait_consuming(first)
    stack.wait_consuming(second)
    topic = stack.topic("document.uploaded")

    def split() -> tuple[list[str], list[str]] | None:
        a, b = stack.assigned_partitions(first), stack.assigned_partitions(second)
        if not a or not b:
            return None
        a = [p for p in a if p.startswith(topic + ":")]
        b = [p for p in b if p.startswith(topic + ":")]
        return (a, b) if a and b and not set(a) & set(b) and len(a) + len(b) == PARTITIONS else None

    owned = wait_until(split, 120, "both indexers to own partitions of document.uploaded", interval_s=0.5)
    assert all(owned)

    uploads = pdfs_covering_every_partition()
    doc_ids = []
    for unit, data in uploads:
        response = upload(gateway, data, f"unit-{unit}.pdf")
        assert response.status_code == 202, response.text
        doc_ids.append(response.json()["doc_id"])
    for doc_id in doc_ids:
        assert wait_document(gateway, doc_id, timeout_s=180)["status"] == "ready"

    client = stack.mongo()
    try:
        db = client[stack.db_name]
        for doc_id in doc_ids:
            assert db["trees"].count_documents({"doc_id": doc_id}) == 1
    finally:
        client.close()

    built_by = {
        process.name: {r.get("doc_id") for r in process.log_records() if r.get("msg") == "tree built"}
        for process in (first, second)
    }
    assert built_by[first.name] and built_by[second.name], built_by
    assert built_by[first.name].isdisjoint(built_by[second.name]), "a document was indexed twice"
    assert built_by[first.name] | built_by[second.name] == set(doc_ids)
    stack.stop_many([first, second])
