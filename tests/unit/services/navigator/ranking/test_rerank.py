"""Cross-encoder reranking: the window each page is read by, the reordering of the fused
ranking's best pages, its fitted weight, and the navigator using it. The cross-encoder here is
an in-memory fake of the `PassageScorer` port; the ONNX adapter is tested in
tests/unit/shared/adapters/test_reranker.py."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from services.navigator.ranking.features import FEATURES
from services.navigator.ranking.fused import rank
from services.navigator.ranking.model import LinearModel, ModelFileError
from services.navigator.ranking.rerank import (
    RERANK_ABSTENTION_FEATURES,
    Reranking,
    RerankModel,
    best_window,
    load_rerank_model,
    rerank,
    windows,
)
from shared.model.query import QuerySettings
from tests.support.navigation import explore, navigate, shipped_model
from tests.support.navigation import reranking as configured_reranking
from tests.support.query.documents import FILLER, indexed, node
from tests.support.query.indexes import build
from tests.support.query.synthetic import MACHINES, kitchen_collection, plant_collection
from treerag.evaluation.fitting import explore_examples, fit_collections
from treerag.evaluation.folds import off_topic_pairs
from treerag.evaluation.rerank_fit import fit_rerank

CODES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")


class KeywordScorer:
    """Relevant (logit +6) when the passage holds the favoured word, else -6; counts its calls."""

    def __init__(self, favoured: str) -> None:
        self.favoured = favoured
        self.name = f"keyword:{favoured}"
        self.calls: list[int] = []

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        self.calls.append(len(passages))
        return [6.0 if self.favoured in passage.split() else -6.0 for passage in passages]


def _manual():  # noqa: ANN202
    """Six pages on pump servicing, each with one code word, all sharing the question's words."""
    pages = [f"Pump servicing note {code} below. The pump is serviced by the crew on schedule. {FILLER}" for code in CODES]
    return build(indexed("d" * 16, "pumps.pdf", pages, [node("0001", "Pumps", 1, len(pages))]))


def _reranking(scorer: KeywordScorer, weight: float) -> Reranking:
    return Reranking(scorer, RerankModel(scorer=scorer.name, weight=weight))


def test_a_page_is_read_by_the_window_holding_most_of_the_question() -> None:
    words = ["filler"] * 300
    words[250:253] = ["pump", "pressure", "valve"]
    text = " ".join(words)
    assert len(windows(text, 120)) == 4  # starts 0, 60, 120, 180: the last ends at the page's end
    chosen = best_window(text, {"pump": 2.0, "pressure": 1.0, "valve": 1.0}, 120)
    assert "pump pressure valve" in chosen and len(chosen.split()) == 120
    assert best_window("a short page", {"pump": 1.0}, 120) == "a short page"


def test_the_cross_encoder_reorders_the_best_pages_and_leaves_the_rest_below() -> None:
    index = _manual()
    found = explore("How often is the pump serviced by the crew?", [index], QuerySettings())
    assert found.candidates is not None
    ranking = rank(found.candidates, shipped_model(), found.missing)
    before = [p.page for p in ranking.pages]
    assert len(before) == len(CODES)
    third = before[2]  # a page the fused ranking does not put first
    scorer = KeywordScorer(CODES[third - 1])

    reranked = rerank(ranking, found.candidates, _reranking(scorer, weight=20.0))
    after = [p.page for p in reranked.pages]
    assert after[0] == third
    assert [p for p in after if p != third] == [p for p in before if p != third]  # the others keep their order
    scores = [p.score for p in reranked.pages]
    assert scores[0] == 1.0 and scores == sorted(scores, reverse=True)
    assert scorer.calls == [5]  # one window each of the five best pages, one batch

    assert [p.page for p in rerank(ranking, found.candidates, _reranking(scorer, weight=0.0)).pages] == before
    # A weight too small to outweigh the fused gap changes nothing either.
    assert [p.page for p in rerank(ranking, found.candidates, _reranking(scorer, weight=1e-9)).pages] == before


def test_a_question_asked_again_costs_no_model_run() -> None:
    index = _manual()
    scorer = KeywordScorer("charlie")
    found = explore("Which crew services the pump on schedule?", [index], QuerySettings())
    ranking = rank(found.candidates, shipped_model(), found.missing)
    first = rerank(ranking, found.candidates, _reranking(scorer, weight=20.0))
    again = rerank(ranking, found.candidates, _reranking(scorer, weight=20.0))
    assert first == again and scorer.calls == [5]


def test_navigate_hands_over_the_reranked_page_first() -> None:
    index = _manual()
    question = "How often is the pump serviced by the crew?"
    plain = navigate(question, [index], QuerySettings())
    last_of_top = plain.passages[4].pages[0]
    scorer = KeywordScorer(CODES[last_of_top - 1])
    reranked = navigate(question, [index], QuerySettings(), reranking=_reranking(scorer, weight=20.0))
    assert reranked.passages[0].pages[0] == last_of_top
    assert {p.pages[0] for p in reranked.passages} == {p.pages[0] for p in plain.passages}


def test_without_a_configured_reranker_nothing_is_reranked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TREERAG_RERANKER", "off")
    assert configured_reranking() is None


def _examples():  # noqa: ANN202
    items, indexes = plant_collection(3)
    labelled, _ = explore_examples(items, off_topic_pairs({"plant": items}), indexes, QuerySettings())
    return labelled


class GoldScorer:
    """Reads the question's machine and finds the page that states its service interval."""

    def __init__(self, honest: bool) -> None:
        self.honest = honest
        self.name = f"gold:{honest}"

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        machine = next(m for m in MACHINES if f" {m} " in f" {question} ")
        states = [f"Each {machine} is serviced" in p for p in passages]
        return [6.0 if s == self.honest else -6.0 for s in states]


def _last_page_first(model):  # noqa: ANN001, ANN202
    """The shipped model with a ranker that knows only where a page is: the last page first, so
    the gold page is among the best five but rarely first."""
    n = len(FEATURES)
    coef = [1.0 if name == "position" else 0.0 for name in FEATURES]
    ranker = LinearModel(features=list(FEATURES), mean=[0.0] * n, scale=[1.0] * n, coef=coef, intercept=0.0)
    return model.model_copy(update={"ranker": ranker})


def test_the_fitted_weight_follows_a_cross_encoder_that_knows_and_ignores_one_that_misleads() -> None:
    examples = _examples()
    model = _last_page_first(shipped_model())
    helpful = fit_rerank(examples, model, GoldScorer(honest=True))
    assert helpful.weight > 0
    assert helpful.fitted_on[f"hit1_weight_{helpful.weight:g}"] == 1.0 > helpful.fitted_on["hit1_weight_0"]
    assert helpful.scorer == "gold:True" and helpful.fitted_on["ranking_model"] == model.digest()
    misleading = fit_rerank(examples, model, GoldScorer(honest=False))
    assert misleading.weight == 0


def test_fitting_needs_a_gold_page_among_the_best_pages() -> None:
    with pytest.raises(ValueError, match="gold page among the best pages"):
        fit_rerank([e for e in _examples() if not e.answerable], shipped_model(), GoldScorer(honest=True))


def test_ask_with_a_reranker_folder_it_cannot_use_says_what_to_do(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    from treerag.cli import main

    monkeypatch.setenv("TREERAG_RERANKER", str(tmp_path / "no-such-model"))
    assert main(["ask", "How often is the pump serviced?", "--store", str(tmp_path / "store")]) == 2
    error = capsys.readouterr().err
    assert "model.onnx, tokenizer.json missing" in error and "scripts/models/reranker.sh fetch" in error


class TopicScorer:
    """Relevant when the passage holds the question's subject (its longest word), else not."""

    name = "topic"

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        subject = max(question.rstrip("?").split(), key=len)
        return [6.0 if subject in passage else -8.0 for passage in passages]


def test_the_answer_decision_is_made_again_with_the_cross_encoders_best_logit() -> None:
    plants, plant_indexes = plant_collection(3)
    kitchens, kitchen_indexes = kitchen_collection(3)
    collections = {"plant": plants, "kitchen": kitchens}
    indexes = plant_indexes | kitchen_indexes
    labelled, negatives = explore_examples(plants + kitchens, off_topic_pairs(collections), indexes, QuerySettings())
    assert negatives
    # The reranking is fitted on top of the ranking model fitted on the same questions, as
    # `make fit-reranker` and every fold of `make eval-rerank` pair them.
    model, _ = fit_collections(collections, indexes, QuerySettings(), lexical=False)
    fitted = fit_rerank(labelled + negatives, model, TopicScorer())
    assert fitted.abstention is not None and fitted.answer_threshold is not None
    assert fitted.abstention.features == list(RERANK_ABSTENTION_FEATURES)
    assert fitted.abstention.coef[1] > 0  # a page about the question makes an answer likelier
    assert fitted.fitted_on["negatives"] == len(negatives)
    reranking = Reranking(TopicScorer(), fitted)

    def decided(example) -> bool:  # noqa: ANN001
        found = example.exploration
        ranking = rank(found.candidates, model, found.missing)
        return rerank(ranking, found.candidates, reranking).answerable

    assert sum(decided(e) for e in labelled) >= 0.97 * len(labelled)  # within the 3 % budget
    assert not any(decided(e) for e in negatives)


def test_a_question_no_best_page_is_about_is_refused_though_the_fused_ranking_answered() -> None:
    index = _manual()
    question = "How often is the pump serviced by the crew?"
    found = explore(question, [index], QuerySettings())
    ranking = rank(found.candidates, shipped_model(), found.missing)
    assert ranking.answerable
    # Trusts the cross-encoder's best logit alone: P(answer) = sigmoid(best logit).
    decision = LinearModel(features=list(RERANK_ABSTENTION_FEATURES), mean=[0.0, 0.0], scale=[1.0, 1.0],
                           coef=[0.0, 1.0], intercept=0.0)

    def reranked(favoured: str):  # noqa: ANN202
        scorer = KeywordScorer(favoured)
        model = RerankModel(scorer=scorer.name, weight=3.0, abstention=decision, answer_threshold=0.5)
        return rerank(ranking, found.candidates, Reranking(scorer, model))

    refused = reranked("zulu")  # on no page
    assert not refused.answerable and refused.answer_probability == pytest.approx(1 / (1 + math.exp(6)))
    assert reranked("charlie").answerable
    plain = navigate(question, [index], QuerySettings(),
                     reranking=Reranking(KeywordScorer("zulu"),
                                         RerankModel(scorer="keyword:zulu", weight=3.0, abstention=decision,
                                                     answer_threshold=0.5)))
    assert plain.passages == [] and any("unlikely to answer" in w for w in plain.warnings)


def test_an_unreadable_reranking_model_says_how_to_regenerate_it(tmp_path) -> None:  # noqa: ANN001
    broken = tmp_path / "rerank.json"
    broken.write_text('{"scorer": "x", "weight": -1}')
    with pytest.raises(ModelFileError, match="make fit-reranker"):
        load_rerank_model(broken)
