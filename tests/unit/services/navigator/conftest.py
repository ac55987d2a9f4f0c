"""The fixtures of the navigator tests: in-memory indexes and a store holding an indexed PDF."""

from tests.support.query.indexes import guide_indexed, guide_store, kitchen, plant

__all__ = ["guide_indexed", "guide_store", "kitchen", "plant"]
