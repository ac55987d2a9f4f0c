"""Compression: relevance floor, near-duplicate merge, trimming, token budget, provenance."""

from __future__ import annotations

from services.compressor.compress import compress
from services.compressor.tokens import count_tokens
from shared.model.query import Passage, QuerySettings

Q = "At what pressure does the safety valve open?"


def passage(text: str, page: int, score: float, node: str = "0001") -> Passage:
    return Passage(doc_id="d1", file_name="plant.pdf", node_id=node, title="t", pages=[page], text=text, score=score)


def test_irrelevant_passages_are_dropped_and_provenance_kept() -> None:
    passages = [
        passage("The safety valve opens at a pressure of 12 bar. It is red.", 4, 0.9, "0004"),
        passage("Bread is baked at 220 degrees for forty minutes in the oven.", 9, 0.5, "0009"),
    ]
    context = compress(Q, passages, QuerySettings())
    assert [(p.doc_id, p.node_id, p.pages) for p in context.passages] == [("d1", "0004", [4])]
    assert context.dropped_irrelevant == 1
    assert context.tokens_before > context.tokens_after > 0


def test_near_duplicates_keep_the_better_passage() -> None:
    text = "The safety valve opens at a pressure of 12 bar and closes again below 10 bar."
    passages = [passage(text, 4, 0.9), passage(text + " Checked yearly.", 7, 0.4)]
    context = compress(Q, passages, QuerySettings())
    assert [p.pages for p in context.passages] == [[4]]
    assert context.merged_duplicates == 1


def test_distinct_relevant_passages_both_survive() -> None:
    passages = [
        passage("The safety valve opens at a pressure of 12 bar.", 4, 0.9),
        passage("Valve pressure readings are logged in the shift book every morning.", 5, 0.6),
    ]
    context = compress(Q, passages, QuerySettings())
    assert [p.pages for p in context.passages] == [[4], [5]]


def test_long_pages_are_trimmed_to_relevant_sentences() -> None:
    filler = " ".join(f"Unrelated remark number {n} about the canteen menu." for n in range(40))
    page = f"{filler} The safety valve opens at a pressure of 12 bar. {filler}"
    context = compress(Q, [passage(page, 4, 0.9)], QuerySettings())
    kept = context.passages[0].text
    assert "12 bar" in kept
    assert context.tokens_after < context.tokens_before / 4


def test_token_budget_is_respected() -> None:
    passages = [
        passage(f"Safety valve {n} opens at a pressure of {10 + n} bar in unit {n}.", n, 1.0 - n / 100)
        for n in range(1, 30)
    ]
    context = compress(Q, passages, QuerySettings(token_budget=60, dedup_threshold=1.0))
    assert 0 < context.tokens_after <= 60
    assert sum(count_tokens(p.text) for p in context.passages) == context.tokens_after


def test_empty_input() -> None:
    context = compress(Q, [], QuerySettings())
    assert context.passages == [] and context.tokens_before == context.tokens_after == 0


def test_token_estimate_is_close_to_word_count_for_prose() -> None:
    text = "The quick brown fox jumps over the lazy dog near the river bank."
    assert 13 <= count_tokens(text) <= 18


def test_tfidf_matches_scikit_learn() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from services.compressor.compress import tfidf_matrix
    from shared.text.lexical import terms

    texts = ["The safety valve opens at 12 bar.", "Valve tests happen every quarter.", "Bread bakes at 220 degrees."]
    ours, query = tfidf_matrix(texts, Q)
    vectorizer = TfidfVectorizer(analyzer=terms, sublinear_tf=True, smooth_idf=True, norm="l2")
    reference = vectorizer.fit_transform(texts).toarray()
    assert abs(ours - reference).max() < 1e-9
    assert abs(query - vectorizer.transform([Q]).toarray()[0]).max() < 1e-9


def test_a_table_that_does_not_fit_whole_still_gives_its_first_rows() -> None:
    first = passage("The safety valve opens at a pressure of 12 bar.", 4, 0.9)
    rows = " ".join(f"valve V{n} pressure {10 + n} bar safety" for n in range(60))  # no sentence end
    table = passage(rows, 5, 0.8)
    budget = count_tokens(first.text) + 80
    context = compress(Q, [first, table], QuerySettings(token_budget=budget, dedup_threshold=1.0))
    assert [p.pages for p in context.passages] == [[4], [5]]
    assert context.passages[1].text.startswith("valve V0 pressure 10 bar")
    assert context.tokens_after <= budget


def test_a_run_without_sentence_ends_keeps_the_piece_that_names_the_question() -> None:
    # Over-long sentences are cut into pieces of about 40 words; only the piece holding the
    # question's terms (and its neighbours) survives, whatever the script of the words around it.
    for filler_word in ("canteen", "cantine-née"):
        filler = " ".join(f"{filler_word} menu item {n}" for n in range(60))
        run = f"{filler} safety valve pressure twelve bar {filler}"  # no sentence end anywhere
        text = compress(Q, [passage(run, 4, 0.9)], QuerySettings()).passages[0].text
        assert "safety valve pressure twelve bar" in text
        assert text.startswith("…") and text.endswith("…"), filler_word
        assert len(text.split()) < len(run.split()) / 2, filler_word
