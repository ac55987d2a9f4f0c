"""Tree building by the model: chunks, page checks, batching, failures."""

from __future__ import annotations

import math

import pytest

from services.indexer.llm_tree import (
    MAX_PAGES_PER_CHUNK,
    LLMTreeError,
    TreeOptions,
    build_llm_tree,
    page_chunks,
)
from shared.adapters.llm.client import BaseLLMClient
from shared.model.tree import walk_tree
from tests.support.llm.fake_provider import FakeProvider, Reply
from tests.support.llm.scripted_model import ScriptedHeading, ScriptedModel

SENTENCES = [
    "The measurement protocol records each sample twice and keeps the mean value.",
    "Operators check the calibration before every batch and log deviations in the register.",
    "Field teams rotate weekly so that no site depends on a single observer.",
    "Samples travel in cooled boxes and reach the laboratory within two days.",
    "Every deviation from the plan is recorded with its reason and its date.",
    "Results are reviewed by a second analyst before they enter the database.",
    "Equipment is cleaned between sites to avoid carrying material across.",
]


def synthetic_pages(headings: list[ScriptedHeading], page_count: int) -> list[str]:
    """Page text with a running header and footer, the headings on their pages, varied prose."""
    pages = []
    for number in range(1, page_count + 1):
        lines = ["Synthetic Field Manual"]
        if number == 1:
            lines.append("Field Survey Handbook")
        lines += [h.title for h in headings if h.page == number]
        lines += [SENTENCES[(number + k) % len(SENTENCES)] + f" Item {number}.{k}." for k in range(6)]
        lines.append(f"Page {number}")
        pages.append("\n".join(lines))
    return pages


HEADINGS = [
    ScriptedHeading(1, "1 Introduction", 2),
    ScriptedHeading(2, "1.1 Scope of the survey", 3),
    ScriptedHeading(2, "1.2 Terminology", 5),
    ScriptedHeading(1, "2 Sampling methods", 7),
    ScriptedHeading(2, "2.1 Soil cores", 8),
    ScriptedHeading(2, "2.2 Water samples", 10),
    ScriptedHeading(1, "3 Results", 12),
    ScriptedHeading(1, "Appendix A Forms", 15),
]


def _by_title(nodes):
    return {n.title: n for n in walk_tree(nodes)}


def test_correct_pages_give_a_verified_nested_tree(client: BaseLLMClient, provider: FakeProvider) -> None:
    model = ScriptedModel(HEADINGS)
    provider.responder = model
    nodes = build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general")
    by_title = _by_title(nodes)
    intro = by_title["1 Introduction"]
    assert [c.title for c in intro.children] == ["1.1 Scope of the survey", "1.2 Terminology"]
    assert (intro.page_start, intro.page_end) == (2, 6)
    assert (by_title["3 Results"].page_start, by_title["3 Results"].page_end) == (12, 14)
    assert by_title["Appendix A Forms"].page_end == 16
    assert all(n.verified for n in walk_tree(nodes))
    # Page 1 precedes the first heading and stays reachable, named by its first line.
    assert (nodes[0].title, nodes[0].page_start, nodes[0].page_end) == ("Field Survey Handbook", 1, 1)
    assert all(n.summary.startswith("Explains") for n in walk_tree(nodes))
    assert model.count("tree") == 1 and model.count("summaries") == 1


def test_off_by_one_pages_are_corrected(client: BaseLLMClient, provider: FakeProvider) -> None:
    provider.responder = ScriptedModel(HEADINGS, page_errors={"1.2 Terminology": 6, "3 Results": 11})
    by_title = _by_title(build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general"))
    assert by_title["1.2 Terminology"].page_start == 5 and by_title["1.2 Terminology"].verified
    assert by_title["3 Results"].page_start == 12 and by_title["3 Results"].verified


def test_wildly_wrong_pages_are_relocated_by_the_text(client: BaseLLMClient, provider: FakeProvider) -> None:
    provider.responder = ScriptedModel(HEADINGS, page_errors={"2.1 Soil cores": 90, "Appendix A Forms": 1})
    by_title = _by_title(build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general"))
    assert by_title["2.1 Soil cores"].page_start == 8 and by_title["2.1 Soil cores"].verified
    assert by_title["Appendix A Forms"].page_start == 15


def test_a_title_on_no_page_stays_unverified_and_is_reported(client: BaseLLMClient, provider: FakeProvider) -> None:
    invented = [*HEADINGS[:3], ScriptedHeading(2, "1.3 Historical notes", 6), *HEADINGS[3:]]
    pages = synthetic_pages(HEADINGS, 16)  # the invented heading is printed nowhere
    provider.responder = ScriptedModel(invented, page_errors={"1.3 Historical notes": 40})
    warnings: list[str] = []
    by_title = _by_title(build_llm_tree(pages, client, "general", warnings=warnings))
    ghost = by_title["1.3 Historical notes"]
    assert not ghost.verified and 1 <= ghost.page_start <= 16
    assert any("not found in the page text" in w for w in warnings)


def test_running_headers_do_not_verify_a_title(client: BaseLLMClient, provider: FakeProvider) -> None:
    # "Synthetic Field Manual" is on every page's edge: it must not count as found anywhere.
    fake = [ScriptedHeading(1, "Synthetic Field Manual", 4), *HEADINGS]
    provider.responder = ScriptedModel(fake)
    by_title = _by_title(build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general"))
    assert not by_title["Synthetic Field Manual"].verified


def test_long_documents_go_in_chunks_of_at_most_100_pages(client: BaseLLMClient, provider: FakeProvider) -> None:
    headings = [ScriptedHeading(1, f"Chapter {i} Topic {i}", 1 + 10 * i) for i in range(25)]
    provider.responder = ScriptedModel(headings)
    nodes = build_llm_tree(synthetic_pages(headings, 250), client, "general")
    structure_calls = [c for c in provider.calls if "table of contents of a" in c.prompt]
    assert len(structure_calls) == 3
    for call in structure_calls:
        tagged = [int(p) for p in __import__("re").findall(r"<page (\d+)>", call.prompt)]
        assert len(tagged) <= MAX_PAGES_PER_CHUNK
    assert [n.title for n in nodes] == [h.title for h in headings]
    # Later chunks see the headings found before, for consistent levels.
    assert "Chapter 9 Topic 9" in structure_calls[1].prompt


def test_page_chunks_respect_the_character_budget() -> None:
    pages = ["x" * 1000] * 30
    chunks = page_chunks(pages, TreeOptions(max_chars_per_chunk=10_500))
    assert chunks[0] == (1, 10) and chunks[-1][1] == 30
    assert all(b - a + 1 <= 10 for a, b in chunks)
    assert page_chunks(["y"] * 250, TreeOptions(max_pages_per_chunk=500)) == [(1, 100), (101, 200), (201, 250)]


def test_summaries_are_batched(client: BaseLLMClient, provider: FakeProvider) -> None:
    headings = [ScriptedHeading(1, f"Section {i} on item {i}", 2 + i) for i in range(90)]
    model = ScriptedModel(headings)
    provider.responder = model
    nodes = build_llm_tree(synthetic_pages(headings, 95), client, "general",
                           options=TreeOptions(max_nodes_per_summary_call=40))
    node_count = sum(1 for _ in walk_tree(nodes))
    assert model.count("summaries") == math.ceil(node_count / 40)
    assert all(n.summary for n in walk_tree(nodes))


def test_malformed_structure_raises_a_tree_error(client: BaseLLMClient, provider: FakeProvider) -> None:
    provider.responder = lambda call: Reply(text="I think the sections are intro and results")
    with pytest.raises(LLMTreeError, match="could not list the sections"):
        build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general")


def test_unreachable_model_raises_a_tree_error(client: BaseLLMClient, provider: FakeProvider) -> None:
    provider.responder = lambda call: Reply.error(503)
    with pytest.raises(LLMTreeError, match="failed 3 times"):
        build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general")


def test_summary_failure_keeps_the_tree(client: BaseLLMClient, provider: FakeProvider) -> None:
    model = ScriptedModel(HEADINGS)
    provider.responder = lambda call: Reply.error(500) if "Summarise" in call.prompt else model(call)
    warnings: list[str] = []
    nodes = build_llm_tree(synthetic_pages(HEADINGS, 16), client, "general", warnings=warnings)
    assert len(list(walk_tree(nodes))) == len(HEADINGS) + 1
    assert all(n.summary for n in walk_tree(nodes))
    assert any("summaries failed" in w for w in warnings)


@pytest.mark.parametrize("domain", ["general", "medical", "legal", "financial", "academic"])
def test_domain_template_reaches_the_prompt(domain: str, client: BaseLLMClient, provider: FakeProvider) -> None:
    provider.responder = ScriptedModel(HEADINGS)
    build_llm_tree(synthetic_pages(HEADINGS, 16), client, domain)
    assert f"of a {domain} document" in provider.calls[0].prompt


def test_unknown_domain_is_refused(client: BaseLLMClient) -> None:
    with pytest.raises(ValueError, match="academic"):
        build_llm_tree(["text"], client, "poetry")
