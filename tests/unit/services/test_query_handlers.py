"""The query stages' handlers over in-memory ports: what each publishes and stores."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from services.navigator.index import DocumentIndex
from shared.app.page_texts import PagesGone
from shared.model.events import (
    AnswerVerified,
    ContextCompressed,
    DocumentDeleted,
    NodesSelected,
    QueryFailed,
    QueryReceived,
    TreeBuilt,
)
from shared.model.query import NavigationSummary, QuerySettings
from shared.model.query_records import QueryRecord, QueryStatus
from tests.support.query.documents import indexed, kitchen_guide, plant_manual
from tests.support.stages import GATEWAY_TIMING, TENANT, QueryStages, delivery, failure, question

PUMP = "How often must the coolant pump be serviced?"
PLANT = plant_manual(tenant=TENANT)


def tree_built(doc_id: str, version: int) -> TreeBuilt:
    return TreeBuilt(doc_id=doc_id, file_name="plant.pdf", version=version, page_count=6, node_count=6)


async def stages_with(*documents: object) -> QueryStages:
    stages = QueryStages()
    for document in documents or (PLANT,):
        await stages.repository.put_indexed(document)  # type: ignore[arg-type]
    return stages


async def navigate(stages: QueryStages, event: QueryReceived, offset: int = 0) -> None:
    await stages.navigator.on_query_received(event, delivery("navigator", "query.received", offset))


async def ask(stages: QueryStages, event: QueryReceived) -> AnswerVerified:
    """The event through navigator, compressor and verifier, each fed what the one before published."""
    await navigate(stages, event)
    await stages.compressor.on_nodes_selected(stages.bus.of_type(NodesSelected)[-1], delivery("compressor", "nodes.selected"))
    await stages.verifier.on_context_compressed(
        stages.bus.of_type(ContextCompressed)[-1], delivery("verifier", "context.compressed")
    )
    return stages.bus.of_type(AnswerVerified)[-1]


def cited_pages(event: NodesSelected) -> set[int]:
    return {page for passage in event.navigation.passages for page in passage.pages}


# ---------------------------------------------------------------- navigator


async def test_navigator_selects_the_page_that_answers_and_carries_the_query() -> None:
    stages = await stages_with(PLANT, kitchen_guide(tenant=TENANT))
    event = question(PUMP)

    await navigate(stages, event)

    [selected] = stages.bus.events
    assert isinstance(selected, NodesSelected)
    assert (selected.query_id, selected.question, selected.tenant) == (event.query_id, PUMP, "acme")
    assert (selected.settings, selected.deadline) == (event.settings, event.deadline)
    assert 2 in cited_pages(selected)
    assert (PLANT.record.doc_id, 1) in selected.documents
    assert [t.stage for t in selected.timings] == ["gateway", "navigator"]
    assert selected.timings[0] == GATEWAY_TIMING
    assert selected.timings[1].queued_ms == 3.0


async def test_navigator_skips_a_redelivered_query() -> None:
    stages = await stages_with()

    await navigate(stages, question(PUMP), offset=4)
    await navigate(stages, question(PUMP), offset=4)

    assert stages.bus.topics == ["nodes.selected"]


async def test_a_query_over_no_documents_fails_with_a_reason_the_client_can_read() -> None:
    stages = QueryStages()

    await navigate(stages, question(PUMP))

    [failed] = stages.bus.events
    assert isinstance(failed, QueryFailed)
    assert failed.stage == "navigator" and "no indexed document" in failed.reason
    stored = await stages.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.FAILED
    assert stored.reason == failed.reason and stored.tenant == "acme"


async def test_a_query_naming_an_unknown_document_fails_naming_it() -> None:
    stages = await stages_with()

    await navigate(stages, question(PUMP, doc_ids=["missing.pdf"]))

    [failed] = stages.bus.of_type(QueryFailed)
    assert "missing.pdf" in failed.reason
    assert not stages.bus.of_type(NodesSelected)


async def test_tree_built_warms_the_index_so_the_next_query_reads_nothing_from_the_store() -> None:
    stages = await stages_with()

    await stages.navigator.on_tree_built(tree_built(PLANT.record.doc_id, 1), delivery("navigator", "tree.built"))
    assert PLANT.record.doc_id in stages.indexes
    loads = (stages.repository.reads["get_tree"], stages.repository.reads["get_pages"])
    assert loads == (1, 1)

    await navigate(stages, question(PUMP))

    assert (stages.repository.reads["get_tree"], stages.repository.reads["get_pages"]) == loads
    assert stages.bus.topics == ["nodes.selected"]


async def test_without_warming_a_new_tree_costs_no_read_until_a_query_asks_it() -> None:
    stages = await stages_with()
    stages.navigator.warm = False
    doc_id = PLANT.record.doc_id
    await navigate(stages, question(PUMP, query_id="q1"))
    reads = stages.repository.reads["get_tree"]

    await stages.navigator.on_tree_built(tree_built(doc_id, 2), delivery("navigator", "tree.built"))

    assert doc_id not in stages.indexes
    assert stages.repository.reads["get_tree"] == reads
    await navigate(stages, question(PUMP, query_id="q2"))
    assert stages.repository.reads["get_tree"] == reads + 1
    assert stages.bus.topics == ["nodes.selected", "nodes.selected"]


async def test_a_cold_navigator_loads_the_index_on_the_first_query_only() -> None:
    stages = await stages_with()

    await navigate(stages, question(PUMP, query_id="q1"))
    await navigate(stages, question("Where is the valve logbook kept?", query_id="q2"))

    assert stages.repository.reads["get_tree"] == 1
    assert stages.bus.topics == ["nodes.selected", "nodes.selected"]


async def test_a_rebuilt_document_is_asked_at_its_new_version() -> None:
    stages = await stages_with()
    doc_id = PLANT.record.doc_id
    await stages.navigator.on_tree_built(tree_built(doc_id, 1), delivery("navigator", "tree.built"))
    pages = [p.replace("every 500 operating hours", "every 750 operating hours") for p in PLANT.pages]
    rebuilt = indexed(doc_id, "plant.pdf", pages, PLANT.tree.nodes, TENANT)
    rebuilt.record.version = 2
    await stages.repository.put_indexed(rebuilt)

    await stages.navigator.on_tree_built(tree_built(doc_id, 2), delivery("navigator", "tree.built", 1))
    loads = stages.repository.reads["get_tree"]
    await navigate(stages, question(PUMP))

    [selected] = stages.bus.of_type(NodesSelected)
    assert selected.documents == [(doc_id, 2)]
    texts = " ".join(p.text for p in selected.navigation.passages)
    assert "750" in texts and "500 operating" not in texts
    assert stages.repository.reads["get_tree"] == loads  # the new version's index was warm


async def test_a_question_asked_again_is_answered_from_the_cache_straight_to_answer_verified() -> None:
    stages = await stages_with()
    first = await ask(stages, question(PUMP, query_id="q1"))
    published = len(stages.bus.events)

    await navigate(stages, question(PUMP, query_id="q2"))

    [again] = stages.bus.events[published:]
    assert isinstance(again, AnswerVerified)
    assert again.query_id == "q2" and again.producer == "navigator"
    assert again.outcome.answer.answer == first.outcome.answer.answer
    assert [t.stage for t in again.timings] == ["gateway", "navigator"]
    stored = await stages.queries.get("q2")
    assert stored is not None and stored.status == QueryStatus.ANSWERED
    assert stored.outcome == again.outcome


async def test_a_rebuilt_document_does_not_answer_from_the_old_versions_cache() -> None:
    stages = await stages_with()
    await ask(stages, question(PUMP, query_id="q1"))
    rebuilt = PLANT.model_copy(deep=True)
    rebuilt.record.version = 2
    await stages.repository.put_indexed(rebuilt)
    await stages.navigator.on_tree_built(tree_built(PLANT.record.doc_id, 2), delivery("navigator", "tree.built"))
    published = len(stages.bus.events)

    await navigate(stages, question(PUMP, query_id="q2"))

    assert stages.bus.topics[published:] == ["nodes.selected"]


async def test_navigator_give_up_stores_the_failure_and_publishes_query_failed() -> None:
    stages = await stages_with()
    event = question(PUMP)

    await stages.navigator.give_up(failure(event, "navigator", "TimeoutError", "scoring timed out"))

    [failed] = stages.bus.events
    assert isinstance(failed, QueryFailed)
    assert (failed.stage, failed.error_type, failed.reason) == ("navigator", "TimeoutError", "scoring timed out")
    assert failed.deadline == event.deadline and failed.timings == event.timings
    stored = await stages.queries.get("q1")
    assert stored is not None and stored.failed_stage == "navigator" and stored.reason == "scoring timed out"


# ---------------------------------------------------------------- compressor


async def test_compressor_publishes_a_context_within_budget_with_the_carried_fields() -> None:
    stages = await stages_with(PLANT, kitchen_guide(tenant=TENANT))
    await navigate(stages, question(PUMP))
    selected = stages.bus.of_type(NodesSelected)[0]

    await stages.compressor.on_nodes_selected(selected, delivery("compressor", "nodes.selected"))

    [compressed] = stages.bus.of_type(ContextCompressed)
    assert compressed.query_id == "q1" and compressed.documents == selected.documents
    assert compressed.deadline == selected.deadline and compressed.tenant == "acme"
    # The verifier reads how the pages were found; the page text travels once, in the context.
    assert compressed.navigation == NavigationSummary.of(selected.navigation)
    assert "passages" not in compressed.model_dump()["navigation"]
    assert [t.stage for t in compressed.timings] == ["gateway", "navigator", "compressor"]
    assert compressed.context.passages
    assert compressed.context.tokens_after <= selected.settings.token_budget
    assert any(2 in p.pages for p in compressed.context.passages)


async def test_a_retained_context_compressed_with_the_whole_navigation_result_is_answered_the_same() -> None:
    """Messages published before the summary replaced the navigation result stay in Kafka until
    retention; a verifier reading one gives the answer the summary gives."""
    stages = await stages_with()
    answered = await ask(stages, question(PUMP))
    selected = stages.bus.of_type(NodesSelected)[-1]
    compressed = stages.bus.of_type(ContextCompressed)[-1]
    earlier = compressed.model_dump(mode="json")
    earlier["navigation"] = selected.navigation.model_dump(mode="json")
    earlier["query_id"] = "q-retained"

    retained = ContextCompressed.model_validate_json(ContextCompressed.model_validate(earlier).model_dump_json())
    await stages.verifier.on_context_compressed(retained, delivery("verifier", "context.compressed"))

    again = stages.bus.of_type(AnswerVerified)[-1]
    assert again.query_id == "q-retained"
    assert again.outcome.answer.answer == answered.outcome.answer.answer
    assert again.outcome.answer.citations == answered.outcome.answer.citations
    assert again.outcome.path == answered.outcome.path and again.outcome.mode == answered.outcome.mode


async def test_the_compressor_reads_the_pages_nodes_selected_refers_to_from_the_store() -> None:
    """On Kafka the selected whole pages travel as references; the compressor hands on the
    context it would build from the pages' text, reading each version's pages once."""
    stages = await stages_with(PLANT, kitchen_guide(tenant=TENANT))
    await navigate(stages, question(PUMP))
    selected = stages.bus.of_type(NodesSelected)[0]
    await stages.compressor.on_nodes_selected(selected, delivery("compressor", "nodes.selected"))
    inline = stages.bus.of_type(ContextCompressed)[-1].context
    reads = stages.repository.reads["get_pages"]

    referred = selected.as_published()
    assert referred.navigation.passages and all(p.whole_page for p in referred.navigation.passages)
    assert not any(p.text for p in referred.navigation.passages)
    assert "every 500 operating hours" not in referred.model_dump_json()
    for n, query_id in enumerate(("q-a", "q-b")):
        again = referred.model_copy(update={"query_id": query_id})
        await stages.compressor.on_nodes_selected(again, delivery("compressor", "nodes.selected", offset=n + 1))
        assert stages.bus.of_type(ContextCompressed)[-1].context == inline
    assert stages.repository.reads["get_pages"] == reads + 1  # once for the version, then held


async def test_a_page_referred_to_after_its_document_was_deleted_fails_the_query_with_ask_again() -> None:
    stages = await stages_with()
    await navigate(stages, question(PUMP))
    referred = stages.bus.of_type(NodesSelected)[0].as_published()
    await stages.repository.delete_document(PLANT.record.doc_id)

    with pytest.raises(PagesGone, match="ask again"):
        await stages.compressor.on_nodes_selected(referred, delivery("compressor", "nodes.selected"))
    assert not stages.bus.of_type(ContextCompressed)


async def test_the_compressor_forgets_a_deleted_documents_pages() -> None:
    stages = await stages_with()
    await navigate(stages, question(PUMP))
    referred = stages.bus.of_type(NodesSelected)[0].as_published()
    await stages.compressor.on_nodes_selected(referred, delivery("compressor", "nodes.selected"))
    assert PLANT.record.doc_id in stages.compressor.pages

    await stages.compressor.on_document_deleted(DocumentDeleted(doc_id=PLANT.record.doc_id, tenant=TENANT),
                                                delivery("compressor", "document.deleted"))

    assert PLANT.record.doc_id not in stages.compressor.pages


async def test_compressor_skips_a_redelivered_message() -> None:
    stages = await stages_with()
    await navigate(stages, question(PUMP))
    selected = stages.bus.of_type(NodesSelected)[0]

    for _ in range(2):
        await stages.compressor.on_nodes_selected(selected, delivery("compressor", "nodes.selected"))

    assert len(stages.bus.of_type(ContextCompressed)) == 1


async def test_compressor_give_up_stores_the_failure_and_publishes_query_failed() -> None:
    stages = await stages_with()
    await navigate(stages, question(PUMP))
    selected = stages.bus.of_type(NodesSelected)[0]

    await stages.compressor.give_up(failure(selected, "compressor", "MemoryError", "context too large"))

    [failed] = stages.bus.of_type(QueryFailed)
    assert failed.stage == "compressor" and failed.reason == "context too large"
    assert failed.deadline == selected.deadline and failed.timings == selected.timings
    stored = await stages.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.FAILED and stored.failed_stage == "compressor"


# ---------------------------------------------------------------- verifier


async def test_verifier_stores_then_publishes_an_answer_citing_the_page() -> None:
    stages = await stages_with()

    verified = await ask(stages, question(PUMP))

    answer = verified.outcome.answer
    assert not answer.abstained and "500" in answer.answer
    assert any(c.doc_id == PLANT.record.doc_id and 2 in c.pages for c in answer.citations)
    assert [t.stage for t in verified.timings] == ["gateway", "navigator", "compressor", "verifier"]
    assert verified.query_id == "q1" and verified.tenant == "acme"
    stored = await stages.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.ANSWERED
    assert stored.outcome == verified.outcome and stored.timings == verified.timings


async def test_verifier_abstains_when_the_documents_do_not_say() -> None:
    stages = await stages_with()

    verified = await ask(stages, question("Which opera did Verdi compose in 1853?"))

    assert verified.outcome.answer.abstained
    assert not verified.outcome.answer.citations


async def test_verifier_skips_a_redelivered_message() -> None:
    stages = await stages_with()
    await ask(stages, question(PUMP))
    compressed = stages.bus.of_type(ContextCompressed)[0]

    await stages.verifier.on_context_compressed(compressed, delivery("verifier", "context.compressed"))

    assert len(stages.bus.of_type(AnswerVerified)) == 1


async def _answer_stored_but_not_published(stages: QueryStages) -> tuple[ContextCompressed, QueryRecord]:
    await navigate(stages, question(PUMP))
    await stages.compressor.on_nodes_selected(stages.bus.of_type(NodesSelected)[0], delivery("compressor", "nodes.selected"))
    compressed = stages.bus.of_type(ContextCompressed)[0]
    stages.bus.fail_next()
    try:
        await stages.verifier.on_context_compressed(compressed, delivery("verifier", "context.compressed"))
    except ConnectionError:
        pass
    else:
        raise AssertionError("the publish failure must reach the consumer, so the message is redelivered")
    stored = await stages.queries.get("q1")
    assert stored is not None and stored.outcome is not None
    return compressed, stored


async def test_a_stored_answer_whose_publication_failed_is_published_by_the_redelivery() -> None:
    stages = await stages_with()
    compressed, stored = await _answer_stored_but_not_published(stages)

    await stages.verifier.on_context_compressed(compressed, delivery("verifier", "context.compressed", attempt=2))
    await stages.verifier.on_context_compressed(compressed, delivery("verifier", "context.compressed", attempt=3))

    [verified] = stages.bus.of_type(AnswerVerified)
    assert verified.outcome == stored.outcome and verified.timings == stored.timings


async def test_a_restarted_verifier_never_publishes_a_stored_answer_again() -> None:
    # After a crash it cannot know whether the earlier delivery published: a second publication
    # could answer twice, so the answer is left to the gateway's polling of the store.
    stages = await stages_with()
    compressed, stored = await _answer_stored_but_not_published(stages)

    await stages.new_verifier().on_context_compressed(compressed, delivery("verifier", "context.compressed", attempt=2))

    assert stages.bus.of_type(AnswerVerified) == []
    assert await stages.queries.get("q1") == stored


async def test_verifier_give_up_stores_the_failure_and_a_later_answer_replaces_it() -> None:
    stages = await stages_with()
    await navigate(stages, question(PUMP))
    await stages.compressor.on_nodes_selected(stages.bus.of_type(NodesSelected)[0], delivery("compressor", "nodes.selected"))
    compressed = stages.bus.of_type(ContextCompressed)[0]

    await stages.verifier.give_up(failure(compressed, "verifier", "RuntimeError", "page store unavailable"))
    [failed] = stages.bus.of_type(QueryFailed)
    assert failed.stage == "verifier" and failed.reason == "page store unavailable"
    assert (await stages.queries.get("q1")).status == QueryStatus.FAILED  # type: ignore[union-attr]

    await stages.verifier.on_context_compressed(compressed, delivery("verifier", "context.compressed", attempt=2))

    stored = await stages.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.ANSWERED and stored.reason is None
    [verified] = stages.bus.of_type(AnswerVerified)
    assert verified.outcome == stored.outcome


async def test_a_failure_never_replaces_an_answer() -> None:
    stages = await stages_with()
    verified = await ask(stages, question(PUMP))

    compressed = stages.bus.of_type(ContextCompressed)[0]
    await stages.verifier.give_up(failure(compressed, "verifier", "RuntimeError", "late failure"))

    stored = await stages.queries.get("q1")
    assert stored is not None and stored.status == QueryStatus.ANSWERED
    assert stored.outcome == verified.outcome
    assert not stages.bus.of_type(QueryFailed)  # a query fails once, and this one was answered


async def test_a_query_over_a_whole_store_reads_its_records_in_one_request() -> None:
    # Against MongoDB a look-up per document is a round trip each: a store of hundreds of
    # documents would cost hundreds of them per query.
    many = [plant_manual(doc_id=f"{k:016x}", tenant=TENANT) for k in range(1, 7)]
    stages = await stages_with(*many, kitchen_guide(tenant=TENANT))
    await navigate(stages, question(PUMP, query_id="q1"))
    asked = dict(stages.bus.of_type(NodesSelected)[-1].documents)
    assert len(asked) == 7
    await stages.compressor.on_nodes_selected(stages.bus.of_type(NodesSelected)[-1], delivery("compressor", "nodes.selected"))
    reads = (stages.repository.reads["get_document"], stages.repository.reads["get_documents"])
    await stages.verifier.on_context_compressed(
        stages.bus.of_type(ContextCompressed)[-1], delivery("verifier", "context.compressed"))

    assert (stages.repository.reads["get_document"], stages.repository.reads["get_documents"]) == (reads[0], reads[1] + 1)
    assert not stages.bus.of_type(AnswerVerified)[-1].outcome.answer.abstained


async def test_verifier_reads_a_documents_pages_once_per_version() -> None:
    stages = await stages_with()
    await ask(stages, question(PUMP, query_id="q1"))
    reads = stages.repository.reads["get_pages"]

    await ask(stages, question("Where is the valve logbook kept?", query_id="q2"))

    # The navigator's index is warm and the verifier keeps the version's pages.
    assert stages.repository.reads["get_pages"] == reads
    assert "C4" in stages.bus.of_type(AnswerVerified)[-1].outcome.answer.answer




async def test_the_answer_key_names_the_ranking_model() -> None:
    """A refitted ranking model orders pages differently: answers cached under the previous
    model must not be served."""
    from shared.app.answer_key import EXTRACTIVE, query_answer_key
    from shared.model.query import QuerySettings

    documents = [("d1", 1)]
    before = query_answer_key(PUMP, documents, QuerySettings(), EXTRACTIVE, ranker="aaaa")
    assert before == query_answer_key(PUMP, documents, QuerySettings(), EXTRACTIVE, ranker="aaaa")
    assert before != query_answer_key(PUMP, documents, QuerySettings(), EXTRACTIVE, ranker="bbbb")


async def test_the_answer_key_names_the_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Page ranking and the verifier's replaced-word check both depend on the embedder: an
    answer cached with word vectors must not be served to a deployment without them."""
    with_vectors = await stages_with()
    await navigate(with_vectors, question(PUMP, query_id="q1"))
    monkeypatch.setenv("TREERAG_EMBEDDINGS", "off")
    lexical = await stages_with()
    await navigate(lexical, question(PUMP, query_id="q1"))

    keys = {stages.bus.of_type(NodesSelected)[-1].answer_key for stages in (with_vectors, lexical)}
    assert len(keys) == 2


# ---------------------------------------------------------------- memory of the warm indexes


@pytest.fixture
async def no_cyclic_collector() -> AsyncIterator[None]:
    """Only reference counting frees memory, as for a frozen warm heap (`warm_heap`); the
    navigator's worker thread is a single one, so that `released` knows when it let go."""
    loop = asyncio.get_running_loop()
    worker = ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(worker)
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        loop.set_default_executor(ThreadPoolExecutor())
        worker.shutdown(wait=True)


async def asked_in_every_mode(stages: QueryStages) -> None:
    """Questions through the three stages in each navigation mode and ranking, so that every
    per-index derivation (page fields, ranking data, spelling, references) exists."""
    settings = [QuerySettings(), QuerySettings(ranking="tree"), QuerySettings(mode="beam"),
                QuerySettings(mode="dfs", ranking="tree")]
    for k, setting in enumerate(settings):
        for text in (PUMP, "Where is the valve logbok kept? See section 2."):
            event = question(text, query_id=f"q{k}-{len(text)}").model_copy(update={"settings": setting})
            await ask(stages, event)


async def released(index: weakref.ref[DocumentIndex]) -> bool:
    """Whether the index is gone once the worker thread has let go of its last navigation (it
    drops a task just after handing its result back, before taking the next one)."""
    await asyncio.to_thread(lambda: None)
    return index() is None


async def warm_index(stages: QueryStages, doc_id: str) -> DocumentIndex:
    [index] = await stages.indexes.indexes([doc_id], TENANT)
    return index


async def test_the_index_of_a_rebuilt_document_is_freed_without_the_cyclic_collector(no_cyclic_collector: None) -> None:
    stages = await stages_with()
    doc_id = PLANT.record.doc_id
    await stages.navigator.on_tree_built(tree_built(doc_id, 1), delivery("navigator", "tree.built"))
    await asked_in_every_mode(stages)
    old = weakref.ref(await warm_index(stages, doc_id))
    rebuilt = indexed(doc_id, "plant.pdf", PLANT.pages, PLANT.tree.nodes, TENANT)
    rebuilt.record.version = 2
    await stages.repository.put_indexed(rebuilt)

    await stages.navigator.on_tree_built(tree_built(doc_id, 2), delivery("navigator", "tree.built", 1))

    assert await released(old)
    assert (await warm_index(stages, doc_id)).record.version == 2


async def test_the_index_of_a_deleted_document_is_freed_without_the_cyclic_collector(no_cyclic_collector: None) -> None:
    stages = await stages_with(PLANT, kitchen_guide(tenant=TENANT))
    await asked_in_every_mode(stages)
    doc_id = PLANT.record.doc_id
    old = weakref.ref(await warm_index(stages, doc_id))

    await stages.navigator.on_document_deleted(DocumentDeleted(doc_id=doc_id), delivery("navigator", "document.deleted"))

    assert await released(old)


async def test_a_warmed_index_is_out_of_the_cyclic_collectors_walk() -> None:
    stages = await stages_with()
    await stages.navigator.on_tree_built(tree_built(PLANT.record.doc_id, 1), delivery("navigator", "tree.built"))

    index = await warm_index(stages, PLANT.record.doc_id)

    assert gc.is_tracked(index)
    assert not any(tracked is index for tracked in gc.get_objects())  # frozen: no generation holds it
