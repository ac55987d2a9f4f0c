"""The LLM path against a real model: SmolLM2-135M-Instruct, served on this machine by
llama.cpp (scripts/llm/local.sh) behind its OpenAI-compatible API, through the product's own
client (TREERAG_LLM=openai). Real HTTP, real tokens, and whatever a 135M-parameter model writes:
the structured replies must parse, an answer must be checked sentence by sentence against its
pages, and a model tree must either be built and verified or fall back with a warning."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fpdf import FPDF

from services.indexer.pipeline import IndexOptions, index_document
from services.navigator.llm_scoring import CandidateScores, LLMNodeScorer, _prompt
from services.verifier.answer import answer_question
from services.verifier.llm_answer import LLMAnswerGenerator
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.call_cache import CallCache
from shared.adapters.llm.client import ModelRetryPolicy
from shared.adapters.llm.openai_compat import OpenAICompatibleClient
from shared.model.documents import BuilderName
from shared.model.query import CompressedContext, Passage, QuerySettings
from tests.support.integration.pdfs import manual_pdf
from treerag.engine import QueryEngine

pytestmark = pytest.mark.integration

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "llm" / "local.sh"
PATIENT = ModelRetryPolicy(max_attempts=2, base_delay_s=0.1, max_delay_s=0.5, malformed_attempts=2)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The local model server, started for this module (built once into the cache by `make test`)."""
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, timeout=1800)
    assert started.returncode == 0, started.stderr[-3000:]
    yield started.stdout.strip().splitlines()[-1].split("=", 1)[1]
    subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def llm(base_url: str) -> OpenAICompatibleClient:
    return OpenAICompatibleClient("smollm2", base_url=base_url, api_key="local", timeout_s=120.0, retry=PATIENT,
                                  cache=CallCache())


CANDIDATES = [("Pump maintenance", "The coolant pump is serviced every 500 hours."),
              ("Safety valves", "Each safety valve opens at 111 bar."),
              ("Filter replacement", "Intake filters are replaced after 30 days.")]


def test_the_real_models_structured_reply_has_the_schemas_shape(llm: OpenAICompatibleClient) -> None:
    # llama.cpp's server refuses json_schema (HTTP 500) and takes json_object with the schema,
    # which it turns into a grammar: the client steps down to that and the reply parses.
    reply = llm.generate_json(_prompt("At what pressure does the safety valve open?", CANDIDATES, 200),
                              CandidateScores, purpose="scoring")
    assert isinstance(reply, CandidateScores)


def test_node_scores_from_the_real_model_are_used_only_when_complete(llm: OpenAICompatibleClient) -> None:
    scores = LLMNodeScorer(llm).score("At what pressure does the safety valve open?", CANDIDATES)
    # A small model often scores only some sections: the navigator then keeps its lexical
    # scores (and counts the fallback) rather than trusting a partial ranking.
    assert scores is None or (len(scores) == len(CANDIDATES) and all(0.0 <= s <= 1.0 for s in scores))


async def test_an_answer_written_by_the_real_model_is_checked_against_its_pages(
        llm: OpenAICompatibleClient, tmp_path: Path) -> None:
    repository = EmbeddedRepository(tmp_path)
    indexed = index_document(manual_pdf(unit=606), "unit-606.pdf")
    await repository.put_indexed(indexed)
    result = await QueryEngine(repository, llm=llm).ask(
        "At what pressure does the safety valve of unit 606 open?", None, QuerySettings(), use_cache=False)
    assert result.generator == "llm:smollm2"
    answer = result.answer
    assert answer.answer.strip()
    if not answer.abstained:
        assert answer.sentences, "every sentence the model wrote is checked"
        assert all(s.verdict in ("supported", "contradicted", "unsupported") for s in answer.sentences)
        assert all(p <= indexed.record.page_count for c in answer.citations for p in c.pages)


def report_without_outline() -> bytes:
    """Four pages with headings and no bookmarks: the model builds the tree (an outline would)."""
    pdf = FPDF()
    for number, (title, text) in enumerate([("Scope", "This report covers the cooling loop of unit 607."),
                                            ("Pump maintenance", "The coolant pump is serviced every 500 hours."),
                                            ("Safety valves", "Each safety valve opens at 617 bar."),
                                            ("Filters", "Intake filters are replaced after 30 days.")], start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 16)
        pdf.cell(0, 10, f"{number} {title}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def test_a_tree_by_the_real_model_is_verified_or_falls_back_with_a_reason(llm: OpenAICompatibleClient) -> None:
    indexed = index_document(report_without_outline(), "unit-607.pdf", IndexOptions(builder="llm"), llm=llm)
    assert indexed.tree.nodes, "a document always gets a tree"
    if indexed.record.builder is BuilderName.LLM:
        assert all(1 <= n.page_start <= n.page_end <= indexed.record.page_count for n in indexed.tree.nodes)
    else:
        assert any("LLM tree failed" in w or "llm" in w.lower() for w in indexed.record.warnings)


def test_the_real_models_answer_streams_as_it_is_written(llm: OpenAICompatibleClient) -> None:
    drafts: list[str] = []
    text = llm.generate_text("List three colours, one sentence each.", purpose="answer", on_text=drafts.append)
    # llama.cpp's server sends a token a chunk: the reply is told many times, each time longer.
    assert text.strip() and len(drafts) >= 3
    assert all(later.startswith(earlier) for earlier, later in zip(drafts, drafts[1:], strict=False))
    assert drafts[-1] == text


def test_a_streamed_answer_of_the_real_model_is_checked_sentence_by_sentence_as_written(
        llm: OpenAICompatibleClient) -> None:
    indexed = index_document(manual_pdf(unit=606), "unit-606.pdf")
    pages = indexed.pages
    passages = [Passage(doc_id=indexed.record.doc_id, file_name="unit-606.pdf", node_id=f"p{n}", pages=[n],
                        text=text, score=1.0) for n, text in enumerate(pages, start=1) if text.strip()]
    context = CompressedContext(question="At what pressure does the safety valve of unit 606 open?",
                                passages=passages, tokens_before=100, tokens_after=100)
    drafts: list[str] = []
    told: list[int] = []
    generator = LLMAnswerGenerator(llm)
    streamed = answer_question(context, QuerySettings(), "dfs", generator,
                               lambda _doc, page: pages[page - 1] if 1 <= page <= len(pages) else None,
                               on_sentence=lambda index, _check, _shown: told.append(index), on_draft=drafts.append)
    assert drafts, "the model's answer is told as it is written"
    if not streamed.abstained:
        # Every sentence is told once, in order, with the same check as the answer's.
        assert told == list(range(len(streamed.sentences)))
    # The same call answered from the cache (told whole at once) gives the same answer.
    again = answer_question(context, QuerySettings(), "dfs", generator,
                            lambda _doc, page: pages[page - 1] if 1 <= page <= len(pages) else None)
    assert again == streamed
