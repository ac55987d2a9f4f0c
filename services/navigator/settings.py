"""The navigator's own settings (prefix TREERAG_NAVIGATOR_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class NavigatorSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TREERAG_NAVIGATOR_", extra="ignore")

    warm: bool = Field(
        default=True,
        description="Build each new tree's index when `tree.built` arrives, so no query waits for it. "
        "Off: a document's index is built by the first query that asks it. Every replica warms "
        "every document, reading its pages, tree and vectors from the store and holding the index "
        "in memory: bulk ingestion with several replicas is cheaper with it off (bench/bus_cost.py).",
    )
    index_cache_pages: int = Field(
        default=100_000, ge=1,
        description="Pages of document indexes a navigator keeps in memory (about 0.044 MB each, "
        "docs/deploy.md); past it the indexes used longest ago are dropped and rebuilt from the store "
        "when asked again. A query over more pages than this still answers: its own documents are kept "
        "until it is done.",
    )
