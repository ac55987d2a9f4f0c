"""docs/configuration.md lists every setting of every process as the settings models define it."""

from __future__ import annotations

from pathlib import Path

from services.indexer.settings import IndexerSettings
from services.navigator.settings import NavigatorSettings
from shared.settings import Settings
from treerag.settings_reference import reference

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def test_the_configuration_page_is_written_from_the_settings_models() -> None:
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/configuration.md is stale: python -m treerag.settings_reference > docs/configuration.md")


def test_every_setting_is_named_with_its_meaning() -> None:
    page = reference()
    for model in (Settings, IndexerSettings, NavigatorSettings):
        prefix = str(model.model_config.get("env_prefix", ""))
        for name, info in model.model_fields.items():
            assert info.description, f"{model.__name__}.{name} has no description for docs/configuration.md"
            if info.validation_alias is None:
                assert f"`{prefix}{name}".upper() + "`" in page.upper()
