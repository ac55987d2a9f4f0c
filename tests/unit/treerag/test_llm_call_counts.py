"""Model calls for a 100-page PDF stay a handful per document and per query (PageIndex makes
about 260 for an 86-page paper); a repeated query makes none."""

from __future__ import annotations

from tests.support.llm.call_counts import measure


def test_call_counts_for_a_100_page_pdf() -> None:
    figures = measure("gemini", chapters=11)
    document = figures["document"]
    assert document["pages"] == 100 and document["builder"] == "llm"
    # One structure call for the 100 pages, summaries for ~45 nodes in batches of 40.
    assert document["tree_calls"] == 1
    assert document["summary_calls"] == 2
    assert document["calls"] == 3
    for mode, query in figures["query"].items():
        assert query["answer_calls_mean"] == 1, mode
        assert query["calls_max"] <= 8, (mode, query)
        assert query["repeated_query_calls"] == 0, mode
    assert figures["query"]["lexical"]["calls_max"] == 1  # lexical navigation: the answer only
    engine = figures["engine_answer_cache"]
    assert engine["first_ask_calls"] >= 2
    assert engine["second_ask_calls"] == 0 and engine["second_ask_cached"]
