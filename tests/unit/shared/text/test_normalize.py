from shared.text.normalize import (
    compact,
    normalize,
    split_sentences,
    title_key,
    tokenize,
)


def test_normalize_folds_case_space_ligatures_and_line_end_hyphens() -> None:
    assert normalize("The  \ufb01rst   Infor-\nmation\u00a0Model") == "the first information model"
    assert normalize("“Quoted” — dash") == '"quoted" - dash'


def test_a_hyphen_at_a_line_end_joins_a_broken_word_and_keeps_a_compounds_own() -> None:
    # A quote of the page must read as the page prints it: "Form 10-K", never "Form 10K".
    assert split_sentences("our Annual Report on Form 10-\nK.\nManage-\nment reviewed non-\nGAAP results for "
                           "2019-\n2020.") == ["our Annual Report on Form 10-K.",
                                                "Management reviewed non-GAAP results for 2019-2020."]
    assert normalize("soft\x02\nware COVID-\n19") == "software covid-19"


def test_title_key_ignores_punctuation_and_spacing() -> None:
    assert title_key("1.2  Data   Model:") == title_key("1.2 data model")
    assert compact("Section 3.2 — Results") == compact("section 3.2 results")


def test_tokenize_latin_keeps_decimals_and_contractions() -> None:
    assert tokenize("Don't see Section 3.2, OK?") == ["don't", "see", "section", "3.2", "ok"]


def test_tokenize_cjk_uses_character_bigrams() -> None:
    tokens = tokenize("東京都の第2章")
    assert "東京" in tokens and "京都" in tokens
    assert "2" in tokens


def test_tokenize_hangul_matches_word_with_particle() -> None:
    # "계약서를" (the contract + object particle) must share a token with "계약서".
    assert set(tokenize("계약서를 검토합니다")) & set(tokenize("계약서"))


def test_split_sentences_respects_abbreviations_and_cjk_stops() -> None:
    text = "See e.g. Fig. 3 for details. The pump\nstops.\n\nHeading without stop\n\n今日は晴れ。明日は雨。"
    assert split_sentences(text) == [
        "See e.g. Fig. 3 for details.",
        "The pump stops.",
        "Heading without stop",
        "今日は晴れ。",
        "明日は雨。",
    ]


def test_split_sentences_keeps_closing_brackets() -> None:
    assert split_sentences("It failed (see Sec. 2.) Then it ran.") == ["It failed (see Sec. 2.)", "Then it ran."]


def test_tokenize_accented_latin_keeps_whole_words() -> None:
    text = "Ärger über die Straße: naïve café-owners\u2019 costs rose 3.5\u00a0% in Q4."
    assert tokenize(text) == [
        "ärger", "über", "die", "strasse", "naïve", "café", "owners", "costs", "rose", "3.5", "in", "q4",
    ]


def test_normalize_collapses_every_unicode_space_and_joins_marked_line_breaks() -> None:
    assert normalize("Prix\u2003total\x0b:\u3000infor\x02\nmation, «\u00a0été\u00a0»") == "prix total : information, « été »"
    assert normalize("infor- \n mation, and - \nthen") == "information, and - then"
