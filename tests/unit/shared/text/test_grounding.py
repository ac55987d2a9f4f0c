"""Checking a sentence against its page: quantities, names, polarity, layout windows, the fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.app.verification import SourcePage, check_sentence, verify_text
from shared.text.grounding import (
    FEATURES,
    LEXICAL,
    GroundingFitError,
    default_fit,
    ground,
    load_fits,
    names_of,
    statements,
)
from shared.text.numbers import number_mentions, unmatched_numbers
from shared.text.polarity import polarity_conflict


@pytest.mark.parametrize(
    ("said", "stated"),
    [
        ("$1.6 billion", "1,600 million"),
        ("$1.6 billion", "$1,577 million"),  # rounded, two significant digits kept
        ("1,577", "1,577"),
        ("$1,577 million", "Revenue (in millions) 1,577"),  # a table's header carries the scale
        ("12%", "12 percent"),
        ("12.5 %", "12.5%"),
        ("3 March 2021", "March 3, 2021"),
        ("June 30", "June 30, 2023"),
        ("2021-03-03", "March 3, 2021"),
        ("fell 5%", "-5%"),
        ("-3.2 million", "(3.2) million"),
    ],
)
def test_the_same_quantity_written_differently_agrees(said: str, stated: str) -> None:
    assert unmatched_numbers(said, stated) == []


@pytest.mark.parametrize(
    ("said", "stated"),
    [
        ("3", "5"),
        ("$2 billion", "$1,577 million"),  # one significant digit would agree with anything near
        ("12%", "12"),  # a percentage is not a count
        ("March 4, 2021", "March 3, 2021"),
        ("April 2021", "March 2021"),
        ("-3", "3"),
        ("0", "1"),
        ("1,578", "1,577"),
    ],
)
def test_a_different_quantity_is_missing(said: str, stated: str) -> None:
    assert [n.text for n in unmatched_numbers(said, stated)]


def test_digits_inside_identifiers_and_section_numbers_are_not_quantities() -> None:
    assert number_mentions("set R_CHECK_5 on x86 as in section 1.2.3") == ()


def test_changed_one_digit_number_is_contradicted_with_both_values_in_the_reason() -> None:
    page = "Configuration\nSet R_CHECK_CONSTANTS to 5 to enable the check.\nThe check runs at load time."
    result = ground("Set R_CHECK_CONSTANTS to 3 to enable the check.", page)
    assert result.verdict == "contradicted"
    assert "3" in result.reason and "5" in result.reason
    assert ground("Set R_CHECK_CONSTANTS to 5 to enable the check.", page).verdict == "supported"


def test_rescaled_amount_is_supported() -> None:
    page = "Results\nNet revenue was $1,577 million in fiscal 2021, up from the prior year.\n"
    assert ground("Net revenue was $1.6 billion in fiscal 2021, up from the prior year.", page).supported
    assert not ground("Net revenue was $1.9 billion in fiscal 2021, up from the prior year.", page).supported


def test_swapped_name_is_contradicted_and_sentence_start_is_not_a_name() -> None:
    page = "Adobe Media Optimizer helps customers plan advertising spend across search portfolios."
    swapped = ground("Adobe Brazil Optimizer helps customers plan advertising spend across search portfolios.", page)
    assert swapped.verdict == "contradicted" and "Brazil" in swapped.reason
    assert names_of("Customers plan spend with Adobe and R_CHECK_CONSTANTS.") == ["Adobe", "R_CHECK_CONSTANTS"]


@pytest.mark.parametrize(
    ("sentence", "page"),
    [
        ("It is not an error to have a decimal point in an integer literal.",
         "It is an error to have a decimal point in an integer literal."),
        ("It is an error to have a decimal point in an integer literal.",
         "It is not an error to have a decimal point in an integer literal."),
        ("Operating costs decreased because of higher fuel prices in the third quarter.",
         "Operating costs increased because of higher fuel prices in the third quarter."),
        ("Run the check after loading the package into the session.",
         "Run the check before loading the package into the session."),
    ],
)
def test_turned_polarity_is_contradicted(sentence: str, page: str) -> None:
    result = ground(sentence, page)
    assert result.verdict == "contradicted"
    assert result.features["polarity_conflict"] == 1.0


def test_polarity_agrees_across_negation_words_and_contractions() -> None:
    assert polarity_conflict("The file is never read.", "The file is not read at all.") is None
    assert polarity_conflict("The value doesn't change.", "The value does not change.") is None
    # A negation of another subject in the evidence neither excuses one the sentence adds nor
    # makes a true sentence a contradiction.
    evidence = "The pump is serviced weekly. The valve is not serviced."
    assert polarity_conflict("The pump is not serviced weekly.", evidence) is not None
    assert polarity_conflict("The pump is serviced weekly.", evidence) is None
    assert polarity_conflict("The valve is never serviced.", evidence) is None


LAID_OUT = (
    "Plant Operations Manual\n"
    "Valve Maintenance\n"
    "The shift supervisor tests every safety valve once per quarter and records the\n"
    "result in the maintenance logbook kept in the control room next to the main panel.\n"
    "• Valves that fail the test are replaced within two working days.\n"
    "• Spare valves are kept in the store room.\n"
    "valve-07 | 12.5 bar | 2019-03 | tested | Q1\n"
    "valve-08 | 13.0 bar | 2020-11 | tested | Q2\n"
)


def test_page_is_cut_at_headings_bullets_and_table_rows_with_exact_offsets() -> None:
    units = statements(LAID_OUT)
    texts = [u.text for u in units]
    assert not any(t.startswith("Valve Maintenance The shift") for t in texts)
    assert any(t.startswith("The shift supervisor tests") for t in texts)
    assert "Valves that fail the test are replaced within two working days." in texts
    assert sum("valve-0" in t for t in texts) == 2 and not any("valve-07" in t and "valve-08" in t for t in texts)
    for unit in units:
        located = LAID_OUT[unit.start : unit.end]
        assert " ".join(located.split()).endswith(unit.text.split()[-1])


def test_true_sentence_in_a_long_window_is_fully_covered() -> None:
    result = ground("The shift supervisor tests every safety valve once per quarter.", LAID_OUT)
    assert result.supported
    assert result.features["coverage"] == 1.0
    assert "once per quarter" in LAID_OUT[result.start : result.end]


@pytest.mark.parametrize("vectors", [None, "wordllama:l2_supercat_256"])
def test_fit_file_loads_and_its_score_rises_with_coverage(vectors: str | None) -> None:
    fit = default_fit(vectors)
    assert fit.word_vectors == vectors
    assert set(fit.weights) == set(FEATURES) and 0.0 < fit.threshold < 1.0
    low = dict.fromkeys(FEATURES, 0.0) | {"coverage": 0.3, "bigram_coverage": 0.2, "char_coverage": 0.4}
    high = low | {"coverage": 1.0, "bigram_coverage": 1.0}
    assert fit.score(high) > fit.threshold > fit.score(low)
    assert fit.score(high | {"number_missing": 1.0}) < fit.score(high)
    # A replaced word far from the page's lowers the score more than one close to it.
    far = high | {"substituted": 1.0, "substitution_distance": 1.0}
    close = high | {"substituted": 1.0, "substitution_distance": 0.2 if vectors else 1.0}
    assert fit.score(far) < fit.threshold and fit.score(far) <= fit.score(close)


def test_fit_for_unknown_word_vectors_is_the_lexical_one(tmp_path: Path) -> None:
    assert default_fit("some-other-embedder").word_vectors is None
    written = tmp_path / "fit.json"
    one = {"weights": dict.fromkeys(FEATURES, 1.0), "bias": 0.0, "threshold": 0.9, "contradiction_coverage": 0.5}
    written.write_text(json.dumps({"fits": {LEXICAL: one, "vectors-a": one | {"threshold": 0.7}}}))
    fits = load_fits(written)
    assert fits[LEXICAL].threshold == 0.9 and fits["vectors-a"].word_vectors == "vectors-a"


def test_malformed_fit_file_says_how_to_regenerate_it(tmp_path: Path) -> None:
    broken = tmp_path / "fit.json"
    broken.write_text(json.dumps({"fits": {LEXICAL: {"weights": {"coverage": 1.0}}}}))
    with pytest.raises(GroundingFitError, match="bench.verify --write-fit"):
        load_fits(broken)


def test_sentence_citing_several_pages_keeps_its_best_page() -> None:
    pages = [SourcePage("d1", 3, "Boilers are flushed every spring."),
             SourcePage("d1", 4, "The feed pump delivers 40 litres per minute at full load.")]
    check = check_sentence("The feed pump delivers 40 litres per minute at full load.", None, pages)
    assert check.verdict == "supported" and check.window is not None and check.window.page == 4


def test_answer_text_is_checked_sentence_by_sentence_without_its_citation_marks() -> None:
    page = [SourcePage("d1", 4, "The feed pump delivers 40 litres per minute at full load. It is serviced yearly.")]
    checks = verify_text("The feed pump delivers 40 litres per minute at full load [plant.pdf, p. 4]. "
                         "The feed pump delivers 45 litres per minute at full load [plant.pdf, p. 4].", page)
    assert [c.verdict for c in checks][0] == "supported"
    assert checks[1].verdict != "supported"
    assert "[plant.pdf" not in checks[0].text


@pytest.mark.parametrize(
    ("page", "true", "wrong"),
    [
        ("제3조 (계약기간)\n본 계약의 기간은 2년으로 한다. 계약은 서면 합의로 연장할 수 있다.\n",
         "본 계약의 기간은 2년으로 한다.", "본 계약의 기간은 5년으로 한다."),
        ("第3条\n契約期間は2年とする。延長は書面で行う。\n", "契約期間は2年とする。", "契約期間は5年とする。"),
    ],
)
def test_korean_and_japanese_sentences_are_compared_too(page: str, true: str, wrong: str) -> None:
    supported = ground(true, page)
    assert supported.verdict == "supported" and supported.features["coverage"] == 1.0
    assert ground(wrong, page).verdict == "contradicted"


def test_identifiers_match_whether_or_not_the_page_has_non_ascii_characters() -> None:
    page = "Settings \u2014 checks\nSet R_CHECK_CONSTANTS to 5 to enable the \u2018strict\u2019 check.\n"
    assert ground("Set R_CHECK_CONSTANTS to 5 to enable the 'strict' check.", page).features["coverage"] == 1.0


def test_statements_after_a_rewritten_one_are_located_exactly_and_at_a_word() -> None:
    # The first statement is spaced out and its last word joined across a hyphenated line
    # break, so it is located only roughly; the next one starts with a word that also occurs
    # inside that rough span ("A", in "TreeRAG"): it must still be found where it stands.
    page = ("Revenue grew      in      every      segment,      led      by      TreeRAG      and      ARR      "
            "during      the      re-\nview. A check follows here. Another one ends the page.")
    units = statements(page)
    assert [" ".join(page[u.start:u.end].split()) for u in units[1:]] == ["A check follows here.",
                                                                          "Another one ends the page."]
    assert not any(u.start > 0 and page[u.start - 1].isalnum() and page[u.start].isalnum() for u in units)
