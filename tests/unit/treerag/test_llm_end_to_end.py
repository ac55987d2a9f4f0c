"""The LLM path end to end, real clients against the local provider server: indexing a
generated PDF, navigating with model scores, answering with model text, and every fault."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from services.indexer.pipeline import IndexOptions, index_pdf
from services.navigator.index import DocumentIndex
from services.navigator.llm_scoring import LLMNodeScorer
from services.verifier.judge import judge_answer
from services.verifier.llm_answer import LLMAnswerGenerator
from shared.adapters.llm.call_cache import CallCache
from shared.adapters.llm.client import BaseLLMClient
from shared.model.documents import BuilderName
from shared.model.query import QuerySettings
from shared.model.tree import walk_tree
from tests.support.llm.clients import make_client
from tests.support.llm.fake_provider import FakeProvider, Reply
from tests.support.llm.pdfs import fact, handbook_pdf
from tests.support.llm.scripted_model import ScriptedModel
from treerag.pipeline import answer_from_indexes


@pytest.fixture(scope="module")
def handbook() -> tuple[bytes, list]:
    return handbook_pdf(chapters=4)  # 37 pages


def _index(data: bytes, client: BaseLLMClient):
    return index_pdf(data, "handbook.pdf", IndexOptions(builder="llm"), llm=client)


def test_index_pdf_uses_the_model_tree(client: BaseLLMClient, provider: FakeProvider, handbook) -> None:
    data, headings = handbook
    model = ScriptedModel(headings)
    provider.responder = model
    indexed = _index(data, client)
    assert indexed.record.builder == BuilderName.LLM
    nodes = {n.title: n for n in walk_tree(indexed.tree.nodes)}
    for heading in headings:
        assert nodes[heading.title].page_start == heading.page
        assert nodes[heading.title].verified
    assert model.count("tree") == 1


def test_model_page_errors_never_reach_the_stored_tree(client: BaseLLMClient, provider: FakeProvider, handbook) -> None:
    data, headings = handbook
    off_by_one = headings[3].title
    wild = headings[7].title
    provider.responder = ScriptedModel(headings, page_errors={off_by_one: headings[3].page + 1, wild: 400})
    nodes = {n.title: n for n in walk_tree(_index(data, client).tree.nodes)}
    assert nodes[off_by_one].page_start == headings[3].page and nodes[off_by_one].verified
    assert nodes[wild].page_start == headings[7].page and nodes[wild].verified


def test_malformed_model_output_falls_back_to_the_offline_tree(client: BaseLLMClient, provider: FakeProvider, handbook) -> None:
    data, _ = handbook
    provider.responder = lambda call: Reply(text="Sections: intro, body, end")
    indexed = _index(data, client)
    assert indexed.record.builder != BuilderName.LLM
    assert any("LLM tree failed" in w and "no valid TocChunk" in w for w in indexed.record.warnings)
    assert indexed.tree.nodes  # the offline tree is complete


def test_unreachable_model_falls_back_and_says_why(client: BaseLLMClient, provider: FakeProvider, handbook) -> None:
    data, _ = handbook
    provider.responder = lambda call: Reply.error(429)
    indexed = _index(data, client)
    assert indexed.record.builder != BuilderName.LLM
    assert any("failed 3 times" in w for w in indexed.record.warnings)


@pytest.fixture(scope="module")
def handbook_index(handbook) -> DocumentIndex:
    """The handbook indexed offline (the query tests exercise the query-side calls only)."""
    data, _ = handbook
    indexed = index_pdf(data, "handbook.pdf", IndexOptions(builder="layout"))
    return DocumentIndex.build(indexed.record, indexed.tree, indexed.pages)


QUESTION = "What is the limits interval for cooling towers?"


def test_question_answered_by_model_with_verified_citation(client: BaseLLMClient, provider: FakeProvider, handbook_index) -> None:
    model = ScriptedModel()
    provider.responder = model
    settings = QuerySettings(llm_scoring=True, mode="beam")
    result = answer_from_indexes(QUESTION, [handbook_index], settings, LLMNodeScorer(client), LLMAnswerGenerator(client))
    answer = result.answer
    assert answer.generator == "llm:" + client.model
    assert fact(1, 1).rstrip(".") in answer.answer
    assert answer.citations and answer.citations[0].file_name == "handbook.pdf"
    cited_page = answer.citations[0].pages[0]
    assert fact(1, 1) in " ".join(handbook_index.page_text(cited_page).split())
    assert answer.sentences[0].grounded
    assert model.count("scoring") >= 1 and model.count("answer") == 1
    assert result.stats.scorer_fallbacks == 0


def test_citation_outside_the_context_is_removed_and_flagged(client: BaseLLMClient, provider: FakeProvider, handbook_index) -> None:
    provider.responder = ScriptedModel(cite_page=33)
    result = answer_from_indexes(QUESTION, [handbook_index], QuerySettings(), None, LLMAnswerGenerator(client))
    assert any("removed citation" in w and "33" in w for w in result.answer.warnings)
    assert all(33 not in c.pages for c in result.answer.citations)


def test_failed_scoring_falls_back_to_lexical_and_is_counted(client: BaseLLMClient, provider: FakeProvider, handbook_index) -> None:
    model = ScriptedModel()
    provider.responder = lambda call: Reply(text="relevant!") if "navigating" in call.prompt else model(call)
    settings = QuerySettings(llm_scoring=True, mode="beam")
    result = answer_from_indexes(QUESTION, [handbook_index], settings, LLMNodeScorer(client), LLMAnswerGenerator(client))
    assert result.stats.scorer_fallbacks >= 1
    assert any("lexical scores used" in w for w in result.warnings)
    assert fact(1, 1).rstrip(".") in result.answer.answer  # the query still succeeds


@pytest.mark.parametrize(
    ("question", "language"),
    [("냉각탑의 점검 주기는 얼마입니까?", "Korean"), ("冷却塔の点検間隔は何日ですか?", "Japanese"), (QUESTION, "English")],
)
def test_answer_language_follows_the_question(
    question: str, language: str, client: BaseLLMClient, provider: FakeProvider, handbook_index
) -> None:
    provider.responder = ScriptedModel()
    LLMAnswerGenerator(client).generate(question, _passages(handbook_index))
    assert f"Write in {language}" in provider.calls[-1].prompt


def _passages(index: DocumentIndex):
    from shared.model.query import Passage

    return [Passage(doc_id=index.doc_id, file_name="handbook.pdf", node_id="0001", title="Cooling towers",
                    pages=[11], text=index.page_text(11) or "")]


def test_unanswerable_question_abstains(client: BaseLLMClient, provider: FakeProvider, handbook_index) -> None:
    provider.responder = ScriptedModel()
    result = answer_from_indexes("Who painted the Mona Lisa?", [handbook_index], QuerySettings(), None, LLMAnswerGenerator(client))
    assert result.answer.abstained


def test_judge_scores_are_read_from_the_model(client: BaseLLMClient, provider: FakeProvider, handbook_index) -> None:
    provider.responder = ScriptedModel()
    scores = judge_answer(client, QUESTION, "Every 13 days [handbook.pdf, p. 14].", _passages(handbook_index))
    assert (scores.faithfulness, scores.relevance, scores.completeness) == (0.9, 1.0, 0.7)
    provider.responder = lambda call: Reply.json({"faithfulness": 1.7, "relevance": -1, "completeness": 0.5, "rationale": ""})
    clamped = judge_answer(client, "another question", "x", [])
    assert (clamped.faithfulness, clamped.relevance) == (1.0, 0.0)


class RecordingCallStore:
    """A persistent reply store that keeps what it is given, with the documents named for it."""

    def __init__(self) -> None:
        self.refs: dict[str, tuple[str, ...]] = {}

    def get(self, key: str) -> dict[str, object] | None:
        return None

    def put(self, key: str, value: dict[str, object], refs: Sequence[str] = ()) -> None:
        self.refs[key] = tuple(refs)


def test_every_reply_a_document_fed_is_stored_under_it(client_kind: str, provider: FakeProvider, handbook) -> None:
    """So that deleting the document drops them: the tree, the summaries, the node scores and
    the answer all quote its pages."""
    data, headings = handbook
    store = RecordingCallStore()
    client = make_client(client_kind, provider, cache=CallCache(store=store))
    model = ScriptedModel(headings)
    provider.responder = model
    indexed = _index(data, client)
    doc_id = indexed.record.doc_id
    assert model.count("tree") == 1 and model.count("summaries") >= 1
    indexing = dict(store.refs)
    assert indexing and set(indexing.values()) == {(doc_id,)}

    index = DocumentIndex.build(indexed.record, indexed.tree, indexed.pages)
    settings = QuerySettings(llm_scoring=True, mode="beam")
    answer_from_indexes(QUESTION, [index], settings, LLMNodeScorer(client), LLMAnswerGenerator(client))
    asked = {key: refs for key, refs in store.refs.items() if key not in indexing}
    assert model.count("scoring") >= 1 and model.count("answer") == 1
    assert asked and set(asked.values()) == {(doc_id,)}
