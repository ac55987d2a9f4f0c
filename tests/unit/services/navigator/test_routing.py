"""Routing over several documents: the features that tell documents apart, the fitted router,
and the weight its P(document | question) has in the page ranking."""

from __future__ import annotations

import numpy as np
import pytest

from services.navigator.index import DocumentIndex
from services.navigator.ranking.fused import ABSTENTION_SIGNALS, rank
from services.navigator.ranking.model import RankingModel, RouterModel
from services.navigator.route_features import ROUTING_FEATURES, UNFITTED_ROUTER, log_probabilities, number_terms
from shared.model.query import QuerySettings
from tests.support.navigation import document_features, explore, navigate, shipped_model
from tests.support.query.synthetic import filing, turnover_question
from treerag.evaluation.routing_fit import PRIOR_GRID, CorpusQuestion, fit_router, routing_weights

COMPANIES = ("Stridewell", "Pacer", "Lumora")
YEARS = (2016, 2017)


@pytest.fixture(scope="module")
def filings() -> dict[tuple[str, int], DocumentIndex]:
    return {(c, y): filing(c, y, f"{3 + k}.{y % 10}") for k, c in enumerate(COMPANIES) for y in YEARS}


def _asked(filings: dict[tuple[str, int], DocumentIndex], company: str, year: int) -> CorpusQuestion:
    own = filings[(company, year)]
    return CorpusQuestion(f"{company}{year}", turnover_question(company, year), own.label, frozenset({(own.label, 4)}),
                          tuple(filings.values()))


def test_numbers_inside_mixed_terms_are_asked_for_as_written_on_covers() -> None:
    assert number_terms(["fy2017", "revenue", "2018", "q3fy23", "10k"]) == ["2017", "23", "10"]
    assert number_terms(["fy2018", "2018"]) == []  # already asked for on its own


def test_features_are_relative_to_the_best_document(filings: dict[tuple[str, int], DocumentIndex]) -> None:
    shelf = list(filings.values())
    matrix = document_features(turnover_question("Pacer", 2017), shelf, RouterModel(
        features=list(ROUTING_FEATURES), coef=[1.0] * len(ROUTING_FEATURES), prior_weight=0.0))
    assert matrix.shape == (len(shelf), len(ROUTING_FEATURES))
    # The question's other words are on no card, and it names a year: the latest filing is moot.
    quiet = {ROUTING_FEATURES.index("card_words"), ROUTING_FEATURES.index("card_latest")}
    assert matrix.max(axis=0).tolist() == pytest.approx([0.0 if k in quiet else 1.0 for k in range(len(ROUTING_FEATURES))])
    opening, numbers = ROUTING_FEATURES.index("opening"), ROUTING_FEATURES.index("opening_numbers")
    pacer_2017 = shelf.index(filings[("Pacer", 2017)])
    pacer_2016 = shelf.index(filings[("Pacer", 2016)])
    # The company is named on both Pacer covers; the year only on one.
    assert matrix[pacer_2017, opening] == matrix[pacer_2016, opening] == 1.0
    assert matrix[pacer_2017, numbers] == 1.0 and matrix[pacer_2016, numbers] == 0.0
    # The cards say whose filing and which year: only Pacer's 2017 one matches both.
    name, year, span = (ROUTING_FEATURES.index(f) for f in ("card_name", "card_year", "card_quarter"))
    assert matrix[pacer_2017, name] == matrix[pacer_2016, name] == 1.0
    assert matrix[pacer_2017, year] == 1.0 and matrix[pacer_2016, year] == 0.0
    assert matrix[:, year].sum() == sum(1 for (_, y) in filings if y == 2017)
    assert matrix[pacer_2017, span] == 1.0  # a whole year asked of an annual report
    unweighed = document_features(turnover_question("Pacer", 2017), shelf, UNFITTED_ROUTER)
    assert not unweighed[:, numbers].any()  # a feature the router does not weigh is not computed


def test_a_name_on_a_card_counts_apart_from_a_common_word_that_happens_to_be_on_one(
    filings: dict[tuple[str, int], DocumentIndex],
) -> None:
    shelf = list(filings.values())
    every = RouterModel(features=list(ROUTING_FEATURES), coef=[1.0] * len(ROUTING_FEATURES), prior_weight=0.0)
    matrix = document_features("Is the holdings structure of Pacer cyclical?", shelf, every)
    name, words = ROUTING_FEATURES.index("card_name"), ROUTING_FEATURES.index("card_words")
    pacer = [shelf.index(filings[("Pacer", y)]) for y in YEARS]
    assert sorted(np.nonzero(matrix[:, name])[0].tolist()) == sorted(pacer)
    # "holdings", written in lower case, is on every card: a word, not the name asked about.
    assert np.allclose(matrix[:, words], 1.0)


def test_a_question_naming_no_period_marks_the_latest_of_the_documents_it_names(
    filings: dict[tuple[str, int], DocumentIndex],
) -> None:
    shelf = list(filings.values())
    every = RouterModel(features=list(ROUTING_FEATURES), coef=[1.0] * len(ROUTING_FEATURES), prior_weight=0.0)
    latest = ROUTING_FEATURES.index("card_latest")
    undated = document_features("What is Pacer's inventory turnover?", shelf, every)
    assert np.nonzero(undated[:, latest])[0].tolist() == [shelf.index(filings[("Pacer", max(YEARS))])]
    dated = document_features(turnover_question("Pacer", min(YEARS)), shelf, every)
    assert not dated[:, latest].any()
    unnamed = document_features("what is the inventory turnover?", shelf, every)
    assert not unnamed[:, latest].any()


def test_fitted_router_sends_each_question_to_its_own_filing(filings: dict[tuple[str, int], DocumentIndex]) -> None:
    training = [_asked(filings, c, y) for c in COMPANIES[:2] for y in YEARS]
    model = shipped_model()
    router = fit_router(training, model, QuerySettings())
    assert router == fit_router(training, model, QuerySettings())  # deterministic
    assert all(c >= 0 for c in router.coef) and router.prior_weight in PRIOR_GRID
    assert router.coef[ROUTING_FEATURES.index("opening_numbers")] > 0
    fitted = model.model_copy(update={"router": router})
    shelf = list(filings.values())
    for year in YEARS:  # a company no training question asked about
        result = navigate(turnover_question("Lumora", year), shelf, QuerySettings(), model=fitted)
        assert result.passages[0].doc_id == filings[("Lumora", year)].doc_id
        assert result.passages[0].pages == [4]


def test_router_needs_questions_asked_of_several_documents(filings: dict[tuple[str, int], DocumentIndex]) -> None:
    lone = CorpusQuestion("q", turnover_question("Pacer", 2016), filings[("Pacer", 2016)].label,
                          frozenset(), (filings[("Pacer", 2016)],))
    with pytest.raises(ValueError, match="several documents"):
        routing_weights([lone])


def test_prior_weight_reorders_pages_across_documents_and_leaves_abstention_alone(
    filings: dict[tuple[str, int], DocumentIndex],
) -> None:
    shelf = [filings[("Pacer", 2016)], filings[("Pacer", 2017)]]
    # Both filings stay on the shortlist (within the relative floor); the year names one of them.
    router = RouterModel(features=list(ROUTING_FEATURES[:4]), coef=[1.0, 0.0, 0.5, 0.0], prior_weight=0.0)
    found = explore(turnover_question("Pacer", 2017), shelf, QuerySettings(), router=router)
    priors = {e.index.label: e.log_prior for e in found.evidence}
    assert priors[shelf[1].label] > priors[shelf[0].label]
    model = shipped_model()
    labels = [d.index.label for d in found.candidates.documents]
    without = rank(found.candidates, model.model_copy(update={"router": router}), found.missing)
    weighted = rank(found.candidates, model.model_copy(update={"router": router.model_copy(
        update={"prior_weight": 2.0})}), found.missing)
    assert labels[weighted.pages[0].document] == shelf[1].label
    assert weighted.answer_probability == pytest.approx(without.answer_probability, abs=1e-3)
    assert np.allclose(weighted.abstention_row, without.abstention_row, rtol=0.05)


def test_a_lone_document_is_ranked_the_same_whatever_the_router(plant: DocumentIndex) -> None:
    question = "How often does the shift supervisor test a safety valve?"
    heavy = RouterModel(features=list(ROUTING_FEATURES), coef=[1.0] + [5.0] * (len(ROUTING_FEATURES) - 1), prior_weight=2.0)
    found = explore(question, [plant], QuerySettings(), router=heavy)
    assert [e.log_prior for e in found.evidence] == [0.0]
    model = shipped_model()
    plain = rank(found.candidates, model.model_copy(update={"router": None}), found.missing)
    routed = rank(found.candidates, model.model_copy(update={"router": heavy}), found.missing)
    assert [(p.document, p.page) for p in plain.pages] == [(p.document, p.page) for p in routed.pages]


def test_model_files_without_a_router_still_load_and_route(plant: DocumentIndex, kitchen: DocumentIndex) -> None:
    text = shipped_model().model_copy(update={"router": None}).to_json()
    old = RankingModel.model_validate_json(text)
    assert old.router is None
    result = navigate("How long is bread baked and at what temperature?", [plant, kitchen], QuerySettings(), model=old)
    assert result.passages[0].doc_id == kitchen.doc_id


def test_a_router_naming_an_unknown_feature_is_refused(plant: DocumentIndex, kitchen: DocumentIndex) -> None:
    broken = RouterModel(features=["page", "colour"], coef=[1.0, 1.0], prior_weight=0.0)
    with pytest.raises(ValueError, match="unknown features"):
        explore("bread", [plant, kitchen], QuerySettings(), router=broken)


def test_log_probabilities_sum_to_one() -> None:
    log_p = log_probabilities(np.array([3.0, 1.0, -2.0]))
    assert np.exp(log_p).sum() == pytest.approx(1.0)
    assert log_p.argmax() == 0


def test_near_copies_in_other_filings_do_not_make_a_clear_answer_look_doubtful() -> None:
    # One company's filings of three years hold the same page; the year on the cover picks one.
    shelf = [filing("Pacer", year, "4.2") for year in (2016, 2017, 2018)]
    model = shipped_model()
    question = turnover_question("Pacer", 2017)
    alone = explore(question, shelf[1:2], QuerySettings(), router=model.router)
    together = explore(question, shelf, QuerySettings(), router=model.router)
    one = rank(alone.candidates, model, alone.missing)
    three = rank(together.candidates, model, together.missing)
    assert together.candidates.documents[three.pages[0].document].index.label == shelf[1].label
    margin = ABSTENTION_SIGNALS.index("margin")
    # Judged on the chosen filing, the best page leads its runner-up as it does alone (against
    # the near-copy in another filing the lead would be nil).
    assert three.abstention_row[margin] == pytest.approx(one.abstention_row[margin], rel=0.1)
