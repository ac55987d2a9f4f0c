"""Verified answers: extractive citations, sentence verdicts, generator answers, abstention."""

from __future__ import annotations

from services.verifier.answer import MAX_ANSWER_WORDS, answer_question
from services.verifier.detector import ABSTENTION, SourcePage, check_sentence
from services.verifier.fragments import MAX_ANSWER_SENTENCE_WORDS
from shared.model.query import Citation, CompressedContext, Passage, QuerySettings, SourceNote
from shared.text.citations import (
    format_citation,
    parse_citations,
    strip_citations,
)

PAGES = {
    4: "Each safety valve opens at a pressure of 12 bar. The valves are painted red.",
    5: "The shift supervisor tests every safety valve once per quarter and signs the logbook.",
}


def context(question: str) -> CompressedContext:
    passages = [
        Passage(doc_id="d1", file_name="plant.pdf", node_id=f"000{p}", pages=[p], text=t, score=1.0 - p / 10)
        for p, t in PAGES.items()
    ]
    return CompressedContext(question=question, passages=passages, tokens_before=40, tokens_after=40)


def page_text(doc_id: str, page: int) -> str | None:
    return PAGES.get(page) if doc_id == "d1" else None


def test_extractive_answer_cites_the_page_holding_the_fact() -> None:
    answer = answer_question(context("How often is a safety valve tested by the supervisor?"), QuerySettings(),
                             "dfs", page_text=page_text)
    assert not answer.abstained
    assert answer.citations[0].pages == [5]
    assert "once per quarter" in answer.answer
    assert "[plant.pdf, p. 5]" in answer.answer
    assert all(s.grounded for s in answer.sentences)
    assert answer.confidence > 0.6 and answer.mode == "dfs"


def test_no_context_abstains() -> None:
    empty = CompressedContext(question="What is the boiler rating?", passages=[], tokens_before=0, tokens_after=0)
    answer = answer_question(empty, QuerySettings(), "dfs")
    assert answer.abstained and answer.answer == ABSTENTION and not answer.citations


def test_unrelated_context_abstains() -> None:
    answer = answer_question(context("Which tenor sang at the gala?"), QuerySettings(), "dfs")
    assert answer.abstained


def test_citation_format_round_trip() -> None:
    assert format_citation("plant.pdf", [5]) == "[plant.pdf, p. 5]"
    assert format_citation("plant.pdf", [3, 4, 5]) == "[plant.pdf, pp. 3-5]"
    parsed = parse_citations("A [plant.pdf, p. 5]. B [plant.pdf, pp. 3-5] C [x, pp. 2, 9]")
    assert [c.pages for c in parsed] == [(5,), (3, 4, 5), (2, 9)]
    assert parsed[0].document == "plant.pdf"


def test_citation_alone_never_grounds_a_sentence() -> None:
    cited = Citation(doc_id="d1", pages=[4])
    page = [SourcePage("d1", 4, PAGES[4])]
    check = check_sentence("The moon is made of green cheese.", cited, page)
    assert check.signals["citation"] == 1.0
    assert not check.grounded
    faithful = check_sentence("Each safety valve opens at a pressure of 12 bar.", cited, page)
    assert faithful.grounded and faithful.score > check.score
    assert faithful.verdict == "supported"
    assert faithful.window is not None and faithful.window.page == 4
    assert PAGES[4][faithful.window.start : faithful.window.end] == "Each safety valve opens at a pressure of 12 bar."


class _Generator:
    name = "llm:test"

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, question: str, passages: list[Passage], notes: list[SourceNote] | None = None) -> str:
        return self.text


def test_generated_answer_is_scored_and_bad_citations_removed() -> None:
    generator = _Generator(
        "The valves open at 12 bar [plant.pdf, p. 4]. "
        "They are tested by the shift supervisor once per quarter [plant.pdf, p. 5]. "
        "They were installed in 1990 [plant.pdf, p. 9]."
    )
    answer = answer_question(context("safety valve facts"), QuerySettings(), "beam", generator, page_text)
    assert answer.generator == "llm:test"
    assert [c.pages for c in answer.citations] == [[4], [5]]
    assert any("p. 9" in w for w in answer.warnings)
    grounded = [s.grounded for s in answer.sentences]
    assert grounded[:2] == [True, True] and grounded[2] is False
    assert "p. 9" not in answer.answer


def test_generated_hallucination_gets_low_confidence_warning() -> None:
    generator = _Generator(
        "Purple elephants dance on Tuesdays [plant.pdf, p. 4]. Nobody knows why [plant.pdf, p. 5]."
    )
    answer = answer_question(context("safety valve facts"), QuerySettings(), "dfs", generator, page_text)
    assert answer.confidence < 0.6
    assert any("low confidence" in w for w in answer.warnings)
    assert any("not supported by their cited pages" in w for w in answer.warnings)


def test_a_dropped_sentence_takes_its_citation_with_it() -> None:
    text = ("Each safety valve opens at a pressure of 12 bar [plant.pdf, p. 4]. "
            "The shift supervisor tests every safety valve once per quarter [plant.pdf, p. 5].")
    kept = answer_question(context("valve facts"), QuerySettings(), "dfs", _Generator(text), page_text)
    assert [c.pages for c in kept.citations] == [[4], [5]]
    wrong = text.replace("12 bar", "15 bar")
    answer = answer_question(context("valve facts"), QuerySettings(), "dfs", _Generator(wrong), page_text)
    assert [c.pages for c in answer.citations] == [[5]]


def test_contradicted_sentence_of_a_model_answer_is_dropped_by_default_and_flagged_on_request() -> None:
    text = ("Each safety valve opens at a pressure of 12 bar [plant.pdf, p. 4]. "
            "Each safety valve opens at a pressure of 15 bar [plant.pdf, p. 4].")
    dropped = answer_question(context("valve pressure"), QuerySettings(), "dfs", _Generator(text), page_text)
    assert "15 bar" not in dropped.answer and "12 bar" in dropped.answer
    assert [s.verdict for s in dropped.sentences] == ["supported", "contradicted"]
    assert any("contradict" in w and "15" in w for w in dropped.warnings)
    flagged = answer_question(context("valve pressure"), QuerySettings(contradicted="flag"), "dfs",
                              _Generator(text), page_text)
    assert "15 bar" in flagged.answer
    assert flagged.sentences[1].verdict == "contradicted"
    # The evidence window points at the page text a viewer highlights.
    window = flagged.sentences[1].window
    assert window is not None and PAGES[4][window.start : window.end].startswith("Each safety valve opens")
    # A contradicted sentence counts zero in the answer's confidence.
    assert abs(flagged.confidence - flagged.sentences[0].score / 2) < 1e-3


def test_generator_abstention_is_recognised() -> None:
    answer = answer_question(context("boiler rating"), QuerySettings(), "dfs", _Generator(ABSTENTION))
    assert answer.abstained


# A laid-out page: running header, heading, prose lines, a table. Passages reach the verifier
# flattened (the compressor joins lines), so only the page text still shows the layout.
LAID_OUT = (
    "Plant Operations Manual\n"
    "Valve Maintenance\n"
    "The shift supervisor tests every safety valve once per quarter and records the\n"
    "result in the maintenance logbook kept in the control room next to the main panel.\n"
    "Valves that fail the test are replaced within two working days by the on-call fitter.\n"
    "valve-07 | 12.5 bar | 2019-03 | tested | Q1\n"
    "valve-08 | 13.0 bar | 2020-11 | tested | Q2\n"
)


def laid_out_answer(question: str, text: str = LAID_OUT, settings: QuerySettings | None = None):
    passage = Passage(doc_id="d2", file_name="ops.pdf", node_id="0001", pages=[3], text=" ".join(text.split()),
                      score=1.0)
    ctx = CompressedContext(question=question, passages=[passage], tokens_before=80, tokens_after=80)
    return answer_question(ctx, settings or QuerySettings(), "dfs",
                           page_text=lambda doc, page: text if (doc, page) == ("d2", 3) else None)


def test_running_header_and_heading_are_not_glued_to_the_answer_sentence() -> None:
    answer = laid_out_answer("How often does the supervisor test a safety valve?")
    assert "once per quarter" in answer.answer
    assert "Plant Operations Manual" not in answer.answer
    assert "Valve Maintenance" not in answer.answer
    assert answer.answer.startswith("The shift supervisor")


def test_table_row_is_not_chosen_for_a_prose_question() -> None:
    answer = laid_out_answer("Which safety valve was tested and when is a failed valve replaced?",
                             settings=QuerySettings(max_answer_sentences=3))
    assert "replaced within two working days" in answer.answer
    assert "|" not in answer.answer and "bar" not in answer.answer


def test_answer_sentences_and_whole_answer_are_capped() -> None:
    sentences = [
        f"The supervisor of shift {i} inspects the pump for leaks and vibration, "
        + ", ".join(f"then reads gauge {i}{k} and logs it as item{i}{k}" for k in range(8)) + "."
        for i in range(4)
    ]
    answer = laid_out_answer("Who inspects the pump for leaks and vibration?", text="\n".join(sentences),
                             settings=QuerySettings(max_answer_sentences=4))
    assert not answer.abstained and answer.answer.startswith("The supervisor of shift")
    shown = [strip_citations(s) for s in answer.answer.split("[ops.pdf, p. 3]") if s.strip()]
    assert shown and all(len(s.split()) <= MAX_ANSWER_SENTENCE_WORDS + 2 for s in shown)  # + ellipses
    assert len(strip_citations(answer.answer).split()) <= MAX_ANSWER_WORDS + MAX_ANSWER_SENTENCE_WORDS
    assert all(s.grounded for s in answer.sentences)


def test_a_statement_page_without_sentences_still_answers_from_its_rows() -> None:
    # A financial statement as the compressor hands it over: its lines joined, no full stop,
    # far longer than any sentence; only the page text shows where its rows end.
    rows = ["CONSOLIDATED STATEMENTS OF INCOME", "(In millions) 2021 2020 2019"]
    rows += [f"{item} {100 + k} {90 + k} {80 + k}" for k, item in enumerate(
        ["Revenues", "Cost of sales", "Gross profit", "Demand creation expense", "Operating overhead expense",
         "Interest expense", "Other expense", "Income before income taxes", "Income tax expense",
         "Selling and administrative expense", "Research and development", "Depreciation and amortisation",
         "Restructuring charges", "Impairment of goodwill", "Equity in affiliates", "Minority interest",
         "Foreign exchange losses", "Pension costs", "Lease costs", "Warranty costs", "Freight costs",
         "Licence income", "Royalty income", "Dividend income", "Rental income", "Commission income",
         "Insurance costs", "Audit fees", "Legal fees", "Consulting fees", "Travel costs", "Net income"])]
    page = "\n".join(rows)
    passage = Passage(doc_id="d9", file_name="annual.pdf", node_id="0009", pages=[7], text=" ".join(rows), score=1.0)
    question = "What were the warranty costs in 2021?"
    handed = CompressedContext(question=question, passages=[passage], tokens_before=300, tokens_after=300)
    answer = answer_question(handed, QuerySettings(), "dfs", page_text=lambda doc, p: page if (doc, p) == ("d9", 7) else None)
    assert not answer.abstained
    assert answer.citations[0].pages == [7]
    assert "Warranty costs 119" in answer.answer


SPREAD = {
    7: "Pumps are listed in the annex. The coolant pump of the north hall is serviced every",
    8: "500 hours by the maintenance crew. Filters are replaced after 30 days of operation.",
}


def _spread_context(text: str, pages: list[int]) -> CompressedContext:
    passage = Passage(doc_id="d2", file_name="hall.pdf", node_id="0007", pages=pages, text=text, score=1.0)
    return CompressedContext(question="", passages=[passage], tokens_before=40, tokens_after=40)


def test_a_passage_cut_inside_a_word_is_never_quoted_from_inside_it() -> None:
    # A retriever's chunk that starts in the middle of "annex" and ends in the middle of "operation".
    chunk = "nex. The coolant pump of the north hall is serviced every 500 hours by the maintenance crew. " \
            "Filters are replaced after 30 days of oper"
    context = _spread_context(chunk, [7, 8]).model_copy(update={"question": "How often are filters replaced?"})
    answer = answer_question(context, QuerySettings(), "dfs", page_text=lambda _d, p: SPREAD.get(p))
    assert "Filters are replaced after 30 days of" in answer.answer
    assert "oper " not in answer.answer and "oper[" not in answer.answer and "nex." not in answer.answer


def test_a_sentence_running_onto_the_next_page_cites_both_and_one_on_the_next_cites_that_page() -> None:
    text = SPREAD[7] + " " + SPREAD[8]
    context = _spread_context(text, [7, 8]).model_copy(update={"question": "How often is the coolant pump serviced?"})
    answer = answer_question(context, QuerySettings(), "dfs", page_text=lambda _d, p: SPREAD.get(p))
    assert answer.citations[0].pages == [7, 8] and "[hall.pdf, pp. 7-8]" in answer.answer
    filters = _spread_context(text, [7, 8]).model_copy(update={"question": "When are the filters replaced?"})
    answered = answer_question(filters, QuerySettings(), "dfs", page_text=lambda _d, p: SPREAD.get(p))
    assert answered.citations[0].pages == [8]
