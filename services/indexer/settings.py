"""Indexer-only settings, read from the environment (prefix TREERAG_INDEXER_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class IndexerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TREERAG_INDEXER_", extra="ignore")

    page_delay_ms: float = Field(
        default=0.0, ge=0, description="Pause per page read; slows indexing down for demos and crash tests."
    )
    max_poll_interval_s: float = Field(
        default=1800.0, gt=0, description="Longest time one PDF may take before Kafka reassigns it."
    )
