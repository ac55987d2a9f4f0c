"""Page evidence and abstention: section structure, proximity, literals, spelling slips, and the
fitted answer decision that makes off-topic questions abstain."""

from __future__ import annotations

from services.navigator.index import DocumentIndex
from services.navigator.spelling import respelled
from shared.model.query import QuerySettings
from shared.text.lexical import query_terms
from shared.text.question import literal_share, literals
from tests.support.navigation import navigate
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build
from treerag.pipeline import answer_from_indexes


def _library() -> DocumentIndex:
    """Page 2 repeats the question's words out of context; page 3 answers it, inside the section
    whose title names the topic."""
    pages = [
        f"Library handbook. {FILLER}",
        f"Loan desk. Every loan is stamped and every loan card is kept. {FILLER} Renewal slips and renewal "
        f"forms are filed by the staff. {FILLER} Period tables hang in the hall.",
        f"The loan lasts three weeks; a renewal adds two more. {FILLER}",
        f"Opening hours. The library opens at nine. {FILLER}",
    ]
    nodes = [
        node("0001", "Introduction", 1, 1),
        node("0002", "Front desk", 2, 2),
        node("0003", "Loan period and renewal", 3, 3),
        node("0004", "Opening hours", 4, 4),
    ]
    return build(indexed("e" * 16, "library.pdf", pages, nodes))


def test_section_title_picks_the_answer_page_over_a_keyword_stuffed_one() -> None:
    index = _library()
    question = "What is the loan period before a renewal?"
    # Bag-of-words BM25 over pages alone prefers the stuffed page ...
    page_scores = index.page_index.scores(query_terms(question))
    assert int(page_scores.argmax()) + 1 == 2
    # ... the tree's section titles put the answer first, and the answer cites it.
    result = navigate(question, [index], QuerySettings())
    assert result.passages[0].pages == [3]
    answer = answer_from_indexes(question, [index], QuerySettings()).answer
    assert not answer.abstained
    assert answer.citations[0].pages == [3]


def test_terms_close_together_beat_terms_scattered_over_a_page() -> None:
    pages = [
        f"Boiler. The boiler is inspected. {FILLER} Pressure gauges are cleaned. {FILLER} "
        f"Every relief line is painted red. {FILLER}",
        f"Inspection schedule. The boiler pressure relief line is inspected monthly. {FILLER}",
    ]
    nodes = [node("0001", "Boiler", 1, 2)]
    index = build(indexed("f" * 16, "boiler.pdf", pages, nodes))
    result = navigate("How often is the boiler pressure relief line inspected?", [index], QuerySettings())
    assert result.passages[0].pages == [2]


def test_options_quoted_verbatim_are_evidence() -> None:
    assert literals("Can I pass code with the -x option or --quiet, and what does .config do?") == (
        "-x", "--quiet", ".config",
    )
    assert literal_share("Use -e expression for one line.", ("-e",)) == 1.0
    assert literal_share("The re-enter key and --extra flag.", ("-e",)) == 0.0


def test_answer_type_words_are_not_topic_terms() -> None:
    assert "many" not in query_terms("How many datasets ship with the package?")
    assert "long" not in query_terms("How long can a command line be?")
    assert "long" in query_terms("Which type stores a long integer?")


def test_an_instruction_on_how_to_answer_is_not_part_of_the_topic() -> None:
    asked = "How many steps replace the filter? Give the answer as a whole integer."
    assert query_terms(asked) == query_terms("How many steps replace the filter?")
    lead_in = "Use the balance sheet. Please answer the following question: what were net assets (in millions)?"
    assert "asset" in " ".join(query_terms(lead_in)), "a sentence that asks is kept, whatever its lead-in"
    for kept in ("What is X? Give the amount of Y.", "Is the limit 3.5 million? Please explain."):
        assert query_terms(kept) == query_terms(kept.replace("?", " ")), kept


def test_an_answer_instruction_changes_neither_the_pages_nor_the_answer_decision(plant: DocumentIndex) -> None:
    for question, instruction in (
        ("How often does the shift supervisor test a safety valve?", "Answer in days, as an integer."),
        ("what grease is used on pump bearings?", "Write your answer in lower case, in list format."),
    ):
        bare = navigate(question, [plant], QuerySettings())
        instructed = navigate(f"{question} {instruction}", [plant], QuerySettings())
        assert [p.pages for p in instructed.passages] == [p.pages for p in bare.passages], question
        assert instructed.stats.answer_probability == bare.stats.answer_probability, question
        assert bare.passages, question


def test_a_misspelt_question_word_is_read_as_the_document_word() -> None:
    pages = [f"Costs. {FILLER}", f"Assets. Depreciation expenses were 714 million dollars in 2015. {FILLER}"]
    index = build(indexed("g" * 16, "report.pdf", pages, [node("0001", "Costs", 1, 1), node("0002", "Assets", 2, 2)]))
    result = navigate("What were the depreciaton expenses?", [index], QuerySettings())
    assert result.passages and result.passages[0].pages == [2]
    assert any("depreciation" in w for w in result.warnings)


def test_a_misspelt_question_is_ranked_and_judged_as_if_spelt_right() -> None:
    pages = [f"Costs. {FILLER}", f"Upkeep. Maintenance expenses were 38 million dollars in 2019. {FILLER}",
             f"Assets. Depreciation of equipment was 20 million dollars. {FILLER}"]
    nodes = [node("0001", "Costs", 1, 1), node("0002", "Upkeep", 2, 2), node("0003", "Assets", 3, 3)]
    index = build(indexed("h" * 16, "annual.pdf", pages, nodes))
    assert respelled("What were the maintenence expenses?", {"maintenence": "maintenance"}, [index]) == (
        "What were the maintenance expenses?"
    )
    slipped = navigate("What were the maintenence expenses?", [index], QuerySettings())
    right = navigate("What were the maintenance expenses?", [index], QuerySettings())
    assert slipped.passages[0].pages == right.passages[0].pages == [2]
    # The dense similarity and word pairs read the corrected word too, so the answer decision
    # is the one the right spelling gets.
    assert slipped.stats.answer_probability == right.stats.answer_probability


def test_an_off_topic_question_without_any_proper_noun_is_refused_or_marked_weak(plant: DocumentIndex) -> None:
    # Every word is lower case, so the named-thing check cannot fire: only relevance evidence can.
    # One word of it ("pressure") is on the pages, so absence is not certain: the product may
    # answer, but then says the evidence is weak (a low probability, or most of the question
    # on no page).
    question = "what pressure should the oven reach before baking sourdough bread loaves?"
    result = answer_from_indexes(question, [plant], QuerySettings())
    assert result.stats.answer_probability is not None and result.stats.answer_probability < 0.9
    if result.answer.abstained:
        assert any("not discussed" in w for w in result.warnings)
    else:
        assert any(w.startswith("weak evidence") for w in result.warnings)


def test_an_answer_the_documents_support_well_carries_no_weak_evidence_label(plant: DocumentIndex) -> None:
    result = answer_from_indexes("How often does the shift supervisor test a safety valve?", [plant], QuerySettings())
    assert not result.answer.abstained
    assert not any(w.startswith("weak evidence") for w in result.warnings)


def test_answerable_questions_clear_the_evidence_floor(plant: DocumentIndex) -> None:
    for question in (
        "How often does the shift supervisor test a safety valve?",
        "what grease is used on pump bearings?",
        "where is the valve logbook kept?",
    ):
        result = answer_from_indexes(question, [plant], QuerySettings())
        assert not result.answer.abstained, question
