"""How many model calls the LLM path makes for a 100-page PDF, counted at the provider server.

`python -m tests.support.llm.call_counts` prints the figures quoted in docs/llm.md; the test in
tests/unit/treerag/test_llm_call_counts.py keeps them within bounds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from collections.abc import Callable
from typing import Any

from services.indexer.pipeline import IndexOptions, index_pdf
from services.navigator.index import DocumentIndex
from services.navigator.llm_scoring import LLMNodeScorer
from services.verifier.llm_answer import LLMAnswerGenerator
from shared.adapters.cache import AnswerCache
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.client import BaseLLMClient
from shared.model.documents import IndexedDocument
from shared.model.query import QuerySettings
from shared.model.tree import count_nodes
from tests.support.llm.clients import make_client
from tests.support.llm.fake_provider import FakeProvider
from tests.support.llm.pdfs import ASPECTS, SUBJECTS, handbook_pdf
from tests.support.llm.scripted_model import ScriptedModel
from treerag.engine import QueryEngine
from treerag.pipeline import answer_from_indexes

# (name, navigation mode, model scoring): every query also has its answer written by the model.
QUERY_KINDS = [("beam", "beam", True), ("dfs", "dfs", True), ("auto", "auto", True), ("lexical", "auto", False)]


def questions(chapters: int) -> list[str]:
    return [
        f"What is the {ASPECTS[c % len(ASPECTS)].lower()} interval for {SUBJECTS[c % len(SUBJECTS)].lower()}?"
        for c in range(0, chapters, 2)
    ]


def measure(kind: str = "gemini", chapters: int = 11) -> dict[str, Any]:
    data, headings = handbook_pdf(chapters=chapters)
    with FakeProvider() as server:
        model = ScriptedModel(headings)
        server.responder = model
        client = make_client(kind, server)
        indexed = index_pdf(data, "handbook.pdf", IndexOptions(builder="llm"), llm=client)
        document = {
            "pages": indexed.record.page_count,
            "nodes": count_nodes(indexed.tree.nodes),
            "builder": indexed.record.builder,
            "calls": len(server.calls),
            "tree_calls": model.count("tree"),
            "summary_calls": model.count("summaries"),
            "input_tokens": client.usage.total().input_tokens,
            "output_tokens": client.usage.total().output_tokens,
        }
        index = DocumentIndex.build(indexed.record, indexed.tree, indexed.pages)
        per_mode: dict[str, Any] = {}
        for name, mode, scored in QUERY_KINDS:
            client = make_client(kind, server)  # a cold reply cache for each kind of query
            scorer = LLMNodeScorer(client) if scored else None
            counts, scoring, answers = [], [], []
            for question in questions(chapters):
                before, score_before, answer_before = len(server.calls), model.count("scoring"), model.count("answer")
                answer_from_indexes(
                    question, [index], QuerySettings(mode=mode, llm_scoring=scored),
                    scorer, LLMAnswerGenerator(client),
                )
                counts.append(len(server.calls) - before)
                scoring.append(model.count("scoring") - score_before)
                answers.append(model.count("answer") - answer_before)
            repeat_before = len(server.calls)
            answer_from_indexes(
                questions(chapters)[0], [index], QuerySettings(mode=mode, llm_scoring=scored),
                scorer, LLMAnswerGenerator(client),
            )
            per_mode[name] = {
                "repeated_query_calls": len(server.calls) - repeat_before,
                "queries": len(counts),
                "calls_mean": statistics.mean(counts),
                "calls_max": max(counts),
                "scoring_calls_mean": statistics.mean(scoring),
                "answer_calls_mean": statistics.mean(answers),
            }
        engine = asyncio.run(_engine_repeat(lambda: make_client(kind, server), indexed, questions(chapters)[0], server))
    return {"provider": kind, "document": document, "query": per_mode, "engine_answer_cache": engine}


async def _engine_repeat(
    new_client: Callable[[], BaseLLMClient], indexed: IndexedDocument, question: str, server: FakeProvider
) -> dict[str, Any]:
    """The same question twice through `QueryEngine` with the answer cache: the second ask is
    answered from the cache, without navigating (and without the reply cache's help: the
    client is fresh for each ask)."""
    with tempfile.TemporaryDirectory() as folder:
        repository = EmbeddedRepository(folder)
        await repository.put_indexed(indexed)
        settings = QuerySettings(mode="beam", llm_scoring=True)
        calls = []
        cached = []
        for _ in range(2):
            engine = QueryEngine(repository, llm=new_client(), answer_cache=AnswerCache(repository))
            before = len(server.calls)
            result = await engine.ask(question, None, settings)
            calls.append(len(server.calls) - before)
            cached.append(result.cached)
        return {"first_ask_calls": calls[0], "second_ask_calls": calls[1], "second_ask_cached": cached[1]}


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2, default=str))
