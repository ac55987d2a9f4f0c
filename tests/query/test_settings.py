"""Query settings: a setting that is accepted is applied, so a misspelt one is refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.model.query import QuerySettings


def test_misspelt_setting_is_refused_not_ignored() -> None:
    with pytest.raises(ValidationError, match="beamwidth"):
        QuerySettings.model_validate({"beamwidth": 3})


def test_known_settings_are_taken() -> None:
    settings = QuerySettings.model_validate({"beam_width": 3, "mode": "dfs"})
    assert (settings.beam_width, settings.mode) == (3, "dfs")
