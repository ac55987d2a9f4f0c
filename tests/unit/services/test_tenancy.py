"""Each stage keeps to the query's tenant: one tenant's query never reaches, reads or is
answered from another tenant's documents."""

from __future__ import annotations

from shared.app.answer_key import EXTRACTIVE, query_answer_key
from shared.model.events import AnswerVerified, ContextCompressed, NodesSelected, QueryFailed
from shared.model.ids import DEFAULT_TENANT, content_id, document_id
from shared.model.query import Passage, QuerySettings
from tests.support.query.documents import kitchen_guide, plant_manual
from tests.support.stages import TENANT, QueryStages, delivery, question
from tests.unit.services.test_query_handlers import PUMP, ask, navigate

OTHER = "globex"


async def test_a_query_over_all_documents_routes_over_its_tenants_only() -> None:
    stages = QueryStages()
    await stages.repository.put_indexed(plant_manual("a" * 16, tenant=OTHER))
    await stages.repository.put_indexed(kitchen_guide("b" * 16, tenant=TENANT))

    await navigate(stages, question(PUMP))

    [selected] = stages.bus.of_type(NodesSelected)
    assert selected.documents == [("b" * 16, 1)]
    assert {p.doc_id for p in selected.navigation.passages} <= {"b" * 16}


async def test_a_query_naming_another_tenants_document_finds_no_document() -> None:
    stages = QueryStages()
    await stages.repository.put_indexed(plant_manual("a" * 16, tenant=OTHER))

    for key in ("a" * 16, "aaaa", "plant.pdf"):  # by id, id prefix and file name alike
        await navigate(stages, question(PUMP, query_id=f"q-{key}", doc_ids=[key]))

    assert not stages.bus.of_type(NodesSelected)
    failures = stages.bus.of_type(QueryFailed)
    assert len(failures) == 3 and all(f.error_type == "NoDocumentsError" for f in failures)


async def test_the_same_question_over_a_copy_of_the_same_pdf_is_not_answered_from_another_tenants_cache() -> None:
    stages = QueryStages()
    await stages.repository.put_indexed(plant_manual("a" * 16, tenant=TENANT))
    await stages.repository.put_indexed(plant_manual("c" * 16, tenant=OTHER))  # the same pages, its own id
    await ask(stages, question(PUMP, query_id="q1"))
    await ask(stages, question(PUMP, query_id="q2"))  # the first tenant again: from the cache
    other = question(PUMP, query_id="q3").model_copy(update={"tenant": OTHER})
    answer = await ask(stages, other)

    cached = [e.query_id for e in stages.bus.of_type(AnswerVerified) if e.producer == "navigator"]
    assert cached == ["q2"]
    assert answer.query_id == "q3" and {c.doc_id for c in answer.outcome.answer.citations} == {"c" * 16}


def test_the_answer_cache_key_names_the_tenant() -> None:
    documents = [("a" * 16, 1)]
    keys = {query_answer_key(PUMP, documents, QuerySettings(), EXTRACTIVE, tenant=t) for t in (TENANT, OTHER)}
    assert len(keys) == 2


async def test_the_verifier_reads_no_page_of_another_tenants_document() -> None:
    stages = QueryStages()
    await stages.repository.put_indexed(plant_manual("a" * 16, tenant=TENANT))
    await stages.repository.put_indexed(kitchen_guide("b" * 16, tenant=OTHER))
    await navigate(stages, question(PUMP))
    [selected] = stages.bus.of_type(NodesSelected)
    await stages.compressor.on_nodes_selected(selected, delivery("compressor", "nodes.selected"))
    [compressed] = stages.bus.of_type(ContextCompressed)
    # A context that also cites the other tenant's document, as a forged or corrupted event would.
    foreign = Passage(doc_id="b" * 16, node_id="0001", title="Bread", pages=[1],
                      text="Bread is baked at 220 degrees for forty minutes.")
    forged = compressed.model_copy(update={"context": compressed.context.model_copy(
        update={"passages": [*compressed.context.passages, foreign]}),
        "documents": [*compressed.documents, ("b" * 16, 1)]})
    reads_before = stages.repository.reads["get_pages"] + stages.repository.reads["get_page_texts"]

    await stages.verifier.on_context_compressed(forged, delivery("verifier", "context.compressed"))

    [answer] = stages.bus.of_type(AnswerVerified)
    assert all(c.doc_id != "b" * 16 for c in answer.outcome.answer.citations)
    assert ("b" * 16, 1) not in stages.verifier.pages._pages  # noqa: SLF001 (what the verifier holds)
    assert stages.repository.reads["get_pages"] + stages.repository.reads["get_page_texts"] - reads_before == 1


def test_a_pdf_gets_one_id_per_tenant_and_the_default_tenant_keeps_the_content_hash() -> None:
    data = b"%PDF-1.4 the same bytes"
    assert document_id(data, DEFAULT_TENANT) == content_id(data)
    ids = {document_id(data, tenant) for tenant in (DEFAULT_TENANT, TENANT, OTHER)}
    assert len(ids) == 3
    assert document_id(data, TENANT) == document_id(data, TENANT)
