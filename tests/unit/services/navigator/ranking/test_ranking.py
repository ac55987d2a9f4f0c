"""Fused ranking: the page features say what they claim, the fitted model demotes contents
pages and refuses off-topic questions, and fitting is deterministic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.navigator.ranking.dense import page_vectors, question_vector
from services.navigator.ranking.features import (
    FEATURES,
    build_candidates,
    candidate_pages,
)
from services.navigator.ranking.fused import ABSTENTION_FEATURES, decision_columns
from services.navigator.ranking.model import (
    DENSE_MODEL_PATHS,
    LEXICAL_MODEL_PATH,
    MODEL_PATH,
    load_model,
    model_for,
)
from services.navigator.ranking.profile import build_profile
from shared.model.query import QuerySettings
from shared.text.names import is_abbreviation, named_words
from shared.text.page_analysis import analyse_pages
from shared.text.page_references import find_page_mentions
from tests.support.navigation import embedder, explore, navigate, shipped_model
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build
from tests.support.query.synthetic import filing, kitchen_collection, plant_collection
from treerag.evaluation.fitting import Example, fit_collections, fit_linear, out_of_fold_probabilities


def _row(question: str, index, page: int) -> dict[str, float]:  # noqa: ANN001
    found = explore(question, [index], QuerySettings())
    assert found.candidates is not None
    keys = found.candidates.keys
    assert (0, page) in keys, f"page {page} is not a candidate of {question!r}"
    return dict(zip(FEATURES, found.candidates.matrix[keys.index((0, page))].tolist(), strict=True))


def test_contents_pages_tables_and_printed_numbers_are_recognised() -> None:
    contents = "Contents\n1 Pumps ........ 3\n2 Valves ........ 7\n3 Boilers 11\nIndex 15"
    table = "Revenue 1,204 1,180\nCosts (310) (295)\nMargin 23.5% 24.1%"
    prose = f"Pumps are serviced by the crew. {FILLER}"
    # Printed numbers two behind the physical ones (a cover and a contents page come first).
    pages = [contents, table] + [f"{prose}\n{n}" for n in range(1, 7)]
    profile = build_profile(analyse_pages(pages))
    assert profile.listing[0] > 0.7 and profile.listing[2] < 0.3
    assert profile.numeric[1] > 0.5 and profile.numeric[2] < 0.1
    assert profile.printed_offset == 2


def test_a_page_named_in_the_question_is_flagged_at_its_physical_number() -> None:
    assert [m.label for m in find_page_mentions("What does page 4 say, and p. 12?")] == ["4", "12"]
    pages = [f"Cover. {FILLER}", f"Contents. {FILLER}"] + [f"Chapter text about valves. {FILLER}\n{n}" for n in range(1, 7)]
    index = build(indexed("c" * 16, "book.pdf", pages, [node("0001", "Book", 1, len(pages))]))
    assert _row("What does page 4 say about valves?", index, 6)["page_reference"] == 1.0
    assert _row("What does page 4 say about valves?", index, 4)["page_reference"] == 0.0


def test_section_path_and_header_carry_what_the_page_text_does_not_say() -> None:
    pages = [
        f"Overview. {FILLER}",
        f"CONSOLIDATED STATEMENTS OF CASH FLOWS\nNet income 1,204\nDepreciation 310\n{FILLER}",
        f"Risk factors. Net income may vary. {FILLER}",
    ]
    nodes = [node("0001", "Overview", 1, 1), node("0002", "Financial statements", 2, 2), node("0003", "Risks", 3, 3)]
    index = build(indexed("d" * 16, "report.pdf", pages, nodes))
    statement = _row("What was net income in the cash flow statement of the financial statements?", index, 2)
    risks = _row("What was net income in the cash flow statement of the financial statements?", index, 3)
    assert statement["header"] > risks["header"] and statement["header_pairs"] > 0
    assert statement["section_path"] > risks["section_path"]


def test_without_embeddings_the_dense_features_are_zero_and_the_lexical_model_ranks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, indexes = plant_collection(1)
    index = next(iter(indexes.values()))
    assert _row("How often is the pump serviced by the crew?", index, 2)["dense_page"] > 0
    monkeypatch.setenv("TREERAG_EMBEDDINGS", "off")
    row = _row("How often is the pump serviced by the crew?", index, 2)
    assert row["dense_page"] == 0.0 and row["dense_section"] == 0.0 and row["dense_rank"] == 0.0
    assert shipped_model() == load_model(LEXICAL_MODEL_PATH)
    assert navigate("How often is the pump serviced by the crew?", [index], QuerySettings()).passages[0].pages == [2]


def test_candidates_hold_the_walks_pages_and_the_best_bm25_pages() -> None:
    _, indexes = plant_collection(1)
    index = next(iter(indexes.values()))
    found = explore("How often is the boiler serviced by the crew?", [index], QuerySettings())
    pages = {page for _, page in found.candidates.keys}
    assert set(found.evidence[0].tree_pages) <= pages
    assert 4 in pages  # the boiler's page


def test_a_whats_question_names_nothing() -> None:
    assert named_words("What's the service interval of the pump?") == []
    assert named_words("What’s the service interval of the pump?") == []
    assert [w for _, w in named_words("What's the interval of the Kestrel pump?")] == ["Kestrel"]


def test_names_are_told_apart_from_abbreviations() -> None:
    words = [w for _, w in named_words("Did Kestrel's QMS audit check the HVAC pumps?")]
    assert words == ["Kestrel's", "QMS", "HVAC"]
    assert [is_abbreviation(w) for w in words] == [False, True, True]


def test_a_period_is_no_name_a_document_must_mention() -> None:
    # Filings print "second quarter of 2023", never "Q22023": whether one covers the period is
    # for its card to say, not for a missing name to refuse.
    assert [w for _, w in named_words("Which region of Kestrel fell most in Q22023 and FY24?")] == ["Kestrel"]


def test_a_question_about_a_company_the_filing_never_names_is_refused() -> None:
    orlan = filing("Orlan", 2021, "4.1")

    def answered(question: str) -> bool:
        return bool(navigate(question, [orlan], QuerySettings(), model=shipped_model()).passages)

    assert answered("What was Orlan's inventory turnover?")
    assert not answered("What was Kestrel's inventory turnover?")
    refused = navigate("What was Kestrel's inventory turnover?", [orlan], QuerySettings(), model=shipped_model())
    assert "the documents never mention Kestrel" in refused.warnings
    # Shorthand the filing never writes out is not a sign that it is about something else.
    assert answered("What was Orlan's inventory turnover in USD?")


def test_each_embedder_gets_the_model_fitted_with_it_else_the_lexical_one(tmp_path: Path) -> None:
    default = load_model()
    other = default.model_copy(update={"fitted_on": {**default.fitted_on, "embeddings": "fastembed:local/other@0"}})
    other_path = tmp_path / "model-other.json"
    other_path.write_text(other.to_json(), encoding="utf-8")
    paths = (MODEL_PATH, tmp_path / "model-not-fitted-yet.json", other_path)
    assert model_for(str(default.fitted_on["embeddings"]), paths) == default
    assert model_for("fastembed:local/other@0", paths) == load_model(other_path)
    assert model_for("fastembed:local/unknown@1", paths) == load_model(LEXICAL_MODEL_PATH)
    assert model_for(None, paths) == load_model(LEXICAL_MODEL_PATH)


def test_the_shipped_models_match_the_features_the_code_computes() -> None:
    for model in (*(load_model(p) for p in DENSE_MODEL_PATHS), load_model(LEXICAL_MODEL_PATH)):
        assert model.ranker.features == list(FEATURES)
        # Every signal a model weighs is computed; a model fitted before the decision left the
        # genre-bound signals out still loads and weighs what it was fitted on.
        assert decision_columns(model.abstention.features)
        assert 0.0 < model.answer_threshold < 1.0
    # `make fit-ranker` fits the default and the lexical model on the travelling signals alone.
    for model in (load_model(), load_model(LEXICAL_MODEL_PATH)):
        assert model.abstention.features == list(ABSTENTION_FEATURES)


def test_fitting_is_deterministic_and_learns_to_demote_contents_pages() -> None:
    plant_items, plant = plant_collection(3)
    kitchen_items, kitchen = kitchen_collection(3)
    collections = {"plant": plant_items, "kitchen": kitchen_items}
    indexes = plant | kitchen
    first, lexical = fit_collections(collections, indexes, QuerySettings())
    second, _ = fit_collections(collections, indexes, QuerySettings())
    assert first.to_json() == second.to_json() and first.digest() == second.digest()
    dense_columns = [FEATURES.index(name) for name in ("dense_page", "dense_section", "dense_rank")]
    assert all(lexical.ranker.coef[c] == 0.0 for c in dense_columns)
    # A fresh document of each collection: the fact's page comes first, never the contents page;
    # a question of the other collection is refused.
    new_plant = plant_collection(4)[1]["plant-3.pdf"]
    result = navigate("How often is the turbine serviced by the crew?", [new_plant], QuerySettings(), model=first)
    assert result.passages and result.passages[0].pages == [6]
    refused = navigate("At what temperature is the scone baked in the oven?", [new_plant], QuerySettings(), model=first)
    assert refused.passages == [] and any("not discussed" in w for w in refused.warnings)


def test_an_unfitted_feature_set_is_refused() -> None:
    model = load_model()
    broken = model.ranker.model_dump()
    broken["coef"] = broken["coef"][:-1]
    with pytest.raises(ValueError, match="refit"):
        type(model.ranker).model_validate(broken)
    assert np.isfinite(model.ranker.decision(np.zeros((1, len(FEATURES))))).all()


def test_candidate_features_are_finite_on_a_document_with_empty_pages() -> None:
    pages = ["", f"Valves open at 12 bar. {FILLER}", ""]
    index = build(indexed("e" * 16, "sparse.pdf", pages, [node("0001", "Valves", 1, 3)]))
    found = explore("At what pressure do valves open?", [index], QuerySettings())
    candidates = build_candidates(found.question, found.evidence, embedder=embedder())
    assert np.isfinite(candidates.matrix).all()


def test_the_pages_closest_in_meaning_are_candidates_even_without_a_shared_word() -> None:
    pages = [f"Opening remarks. {FILLER}"] * 30
    index = build(indexed("f" * 16, "long.pdf", pages, [node("0001", "Remarks", 1, 30)]))
    found = explore("How are intake filters replaced?", [index], QuerySettings())
    evidence = found.evidence[0]
    evidence.page_bm25[:] = 0.0  # no page shares a term with the question
    dense = np.zeros(len(pages))
    dense[[23, 7]] = (0.9, 0.8)
    pages_found = candidate_pages(evidence, [], dense)
    assert {24, 8} <= set(pages_found)
    assert candidate_pages(evidence, [], np.zeros(len(pages))) == evidence.tree_pages  # embeddings off: none added


def test_dense_rank_is_the_pages_rank_by_meaning_in_its_document() -> None:
    _, indexes = plant_collection(1)
    index = next(iter(indexes.values()))
    question = "How often is the boiler serviced by the crew?"
    cosines = page_vectors(index, embedder()) @ question_vector(question, embedder())
    order = [int(p) + 1 for p in np.argsort(-cosines, kind="stable")]
    for rank, page in enumerate(order[:3]):
        assert _row(question, index, page)["dense_rank"] == pytest.approx(1.0 / (1 + rank))


def test_the_fused_ranking_hands_over_context_pages_pages() -> None:
    _, indexes = plant_collection(1)
    index = next(iter(indexes.values()))
    question = "How often is the pump serviced by the crew?"
    wide = navigate(question, [index], QuerySettings(context_pages=7, beam_width=1))
    narrow = navigate(question, [index], QuerySettings(context_pages=3, beam_width=1))
    assert len(wide.passages) == 7 and len(narrow.passages) == 3
    assert [p.pages for p in narrow.passages] == [p.pages for p in wide.passages[:3]]


def test_the_answer_threshold_is_set_on_probabilities_of_models_that_never_saw_the_document() -> None:
    rng = np.random.default_rng(0)
    groups = [f"doc-{k % 10}.pdf" for k in range(200)]
    examples = [Example(item_id=str(k), group=g, exploration=None) for k, g in enumerate(groups)]  # type: ignore[arg-type]
    x = rng.normal(size=(200, len(ABSTENTION_FEATURES)))
    y = (x[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(float)
    model = fit_linear(ABSTENTION_FEATURES, x, y)
    p = out_of_fold_probabilities(examples, x, y, model)
    # Relabelling one document's examples changes the in-sample fit but not their own
    # out-of-fold probabilities: those come from models fitted on the other documents.
    mine = np.array([g == groups[0] for g in groups])
    flipped = y.copy()
    flipped[mine] = 1 - flipped[mine]
    assert np.allclose(out_of_fold_probabilities(examples, x, flipped, model)[mine], p[mine])
    assert not np.allclose(fit_linear(ABSTENTION_FEATURES, x, flipped).probability(x[mine]), model.probability(x[mine]))
