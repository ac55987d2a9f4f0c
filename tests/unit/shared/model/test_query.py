"""Query settings: a setting that is accepted is applied, so a misspelt one is refused."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from shared.model.events import QueryReceived
from shared.model.query import QuerySettings


def test_misspelt_setting_is_refused_not_ignored() -> None:
    with pytest.raises(ValidationError, match="beamwidth"):
        QuerySettings.model_validate({"beamwidth": 3})


def test_known_settings_are_taken() -> None:
    settings = QuerySettings.model_validate({"beam_width": 3, "mode": "dfs"})
    assert (settings.beam_width, settings.mode) == (3, "dfs")


INT64_OVERFLOW = 2**63
INT_FIELDS = [n for n, f in QuerySettings.model_fields.items() if f.annotation in (int, "int")]
FLOAT_FIELDS = [n for n, f in QuerySettings.model_fields.items() if f.annotation in (float, "float")]


def test_the_settings_have_counts_and_shares() -> None:
    assert {"beam_width", "token_budget", "max_depth"} <= set(INT_FIELDS)
    assert {"semantic_weight", "score_threshold"} <= set(FLOAT_FIELDS)


@pytest.mark.parametrize("name", INT_FIELDS)
@pytest.mark.parametrize("value", [INT64_OVERFLOW, 2**31, 10**9, -1, 0])
def test_counts_outside_their_product_range_are_refused(name: str, value: int) -> None:
    with pytest.raises(ValidationError, match=name):
        QuerySettings.model_validate({name: value})


@pytest.mark.parametrize("name", FLOAT_FIELDS)
@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e308", "-0.5", "1.5"])
def test_shares_are_finite_fractions(name: str, raw: str) -> None:
    # Raw JSON: NaN and Infinity are what a client can send that Python's json accepts.
    with pytest.raises(ValidationError, match=name):
        QuerySettings.model_validate_json(f'{{"{name}": {raw}}}')


@pytest.mark.parametrize("value", ["5", True, 5.0, [5], {"v": 5}, None, "x" * 100_000])
def test_a_count_of_the_wrong_type_is_refused_not_coerced(value: object) -> None:
    with pytest.raises(ValidationError, match="beam_width"):
        QuerySettings.model_validate({"beam_width": value})


def test_every_default_and_every_bound_is_accepted() -> None:
    assert QuerySettings.model_validate_json(QuerySettings().model_dump_json()) == QuerySettings()
    for name in INT_FIELDS:
        field = QuerySettings.model_fields[name]
        upper = next(m.le for m in field.metadata if getattr(m, "le", None) is not None)
        assert upper < 2**31, f"{name} allows {upper}"
        assert getattr(QuerySettings.model_validate({name: upper}), name) == upper
    for name in FLOAT_FIELDS:
        assert getattr(QuerySettings.model_validate({name: 1}), name) == 1.0
        assert getattr(QuerySettings.model_validate({name: 0.0}), name) == 0.0


def test_a_query_event_with_hostile_settings_or_question_does_not_decode() -> None:
    ok = QueryReceived(query_id="q1", question="why?")
    assert QueryReceived.model_validate_json(ok.model_dump_json()) == ok
    body = ok.model_dump(mode="json")
    for bad in (
        {"settings": {"beam_width": INT64_OVERFLOW}},
        {"settings": {"token_budget": -1}},
        {"question": "x" * 1_000_000},
        {"query_id": "q" * 10_000},
        {"doc_ids": ["d"] * 1000},
        {"tenant": "t" * 10_000},
    ):
        with pytest.raises(ValidationError):
            QueryReceived.model_validate_json(json.dumps({**body, **bad}))
