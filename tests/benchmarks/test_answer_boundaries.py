"""The run-wide check that no answer quotes a statement from inside a word: it flags a cut word at
either edge, and passes whole words, ellipses and statements built from a table's cells."""

from __future__ import annotations

from bench.answer_boundaries import check, statements

PAGE = "Income before taxes rose to $1,577 million. The ﬁnancial statements are audited."


def answer(text: str) -> dict[str, object]:
    return {"system": "treerag-auto", "item_id": "q1", "abstained": False, "answer": text}


def test_each_statement_is_read_with_the_pages_it_cites() -> None:
    found = statements("Income before taxes rose. [a.pdf, p. 1] … The financial statements … [a.pdf, pp. 1-2]")
    assert found == [("Income before taxes rose.", "a.pdf", (1,)),
                     ("The financial statements", "a.pdf", (1, 2))]


def test_a_statement_cut_inside_a_word_is_found_at_either_edge() -> None:
    result = check([answer("ncome before taxes rose [a.pdf, p. 1] The financial statem [a.pdf, p. 1]")],
                   {"a.pdf": [PAGE]})
    assert result["statements_checked"] == 2
    assert [(f["edge"], f["word"]) for f in result["examples"]] == [("start", "ncome"), ("end", "statem")]


def test_whole_words_pass_ligatures_folded_and_refusals_skipped() -> None:
    items = [answer("Income before taxes rose to $1,577 million. [a.pdf, p. 1] The financial statements are audited. "
                    "[a.pdf, p. 1] financial statements [a.pdf, p. 1]"),
             {"system": "treerag-auto", "item_id": "q2", "abstained": True, "answer": "ncome [a.pdf, p. 1]"}]
    result = check(items, {"a.pdf": [PAGE]})
    assert (result["statements_checked"], result["edges_inside_a_word"]) == (3, 0)


def test_a_figure_answer_is_checked_on_its_row_label_and_statement_not_its_scaled_value() -> None:
    page = "CONSOLIDATED STATEMENTS OF CASH FLOWS\nNet cash provided by operating activities 381,603 120,000"
    figure = answer("$382 million for 2020 — Net cash provided by operating activities, Consolidated Statements of "
                    "Cash Flows [a.pdf, p. 1]")
    assert check([figure], {"a.pdf": [page]})["edges_inside_a_word"] == 0
    cut = answer("$382 million for 2020 — et cash provided by operating activities [a.pdf, p. 1]")
    assert [f["word"] for f in check([cut], {"a.pdf": [page]})["examples"]] == ["et"]


def test_only_the_products_own_answers_count_against_the_check() -> None:
    baseline = {**answer("ncome before taxes rose [a.pdf, p. 1]"), "system": "bm25-chunks"}
    result = check([baseline, answer("Income before taxes rose [a.pdf, p. 1]")], {"a.pdf": [PAGE]})
    assert (result["edges_inside_a_word"], result["product_edges_inside_a_word"]) == (1, 0)
    assert result["by_system"]["bm25-chunks"] == {"statements": 1, "inside_a_word": 1}
