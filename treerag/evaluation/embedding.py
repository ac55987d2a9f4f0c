"""The embedder the harness ranks, routes and fits with: the one this process's settings name,
as the stages' bootstraps load it (`TREERAG_EMBEDDINGS`; None when off). Every fold and every
fitting step sees the same one."""

from __future__ import annotations

from shared.adapters.embeddings import make_embedder
from shared.ports.model_roles import Embedder
from shared.settings import get_settings


def harness_embedder() -> Embedder | None:
    """Loaded once per embeddings configuration (`make_embedder` keeps it)."""
    return make_embedder(get_settings())


def embedder_name() -> str | None:
    embedder = harness_embedder()
    return embedder.name if embedder is not None else None
