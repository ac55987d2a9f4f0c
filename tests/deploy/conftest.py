"""Fixtures of the deploy tests: what the services export (series and their labels), which the
dashboards must query."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase

import shared.adapters.metrics as treerag_metrics

# Labels Prometheus attaches to every scraped series, and the series it synthesizes per target.
TARGET_LABELS = frozenset({"job", "instance"})
SYNTHETIC_SERIES = {
    name: frozenset()
    for name in ("up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_series_added")
}

_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
}


@dataclass
class Exported:
    labels_by_series: dict[str, frozenset[str]] = field(default_factory=dict)

    def exports(self, series: str) -> bool:
        return series in self.labels_by_series

    def labels_of(self, series: str) -> frozenset[str]:
        return self.labels_by_series.get(series, frozenset()) | TARGET_LABELS

    def add_metric(self, metric: MetricWrapperBase) -> None:
        labels = frozenset(metric._labelnames)
        for suffix in _SUFFIXES[metric._type]:
            extra = {"le"} if suffix == "_bucket" else set()
            self.labels_by_series[metric._name + suffix] = labels | extra

    def add_collected(self, registry: CollectorRegistry) -> None:
        """Series of collectors that are not metric objects (process, platform, GC collectors)."""
        for family in registry.collect():
            for sample in family.samples:
                known = self.labels_by_series.get(sample.name, frozenset())
                self.labels_by_series[sample.name] = known | frozenset(sample.labels)


def treerag_exports() -> Exported:
    exported = Exported()
    for value in vars(treerag_metrics).values():
        if isinstance(value, MetricWrapperBase):
            exported.add_metric(value)
    exported.add_collected(REGISTRY)
    for name, labels in SYNTHETIC_SERIES.items():
        exported.labels_by_series[name] = labels
    return exported


def faststream_exports(prefix: str = "faststream") -> Exported:
    """The series of FastStream's Prometheus middleware, read from its own metrics container."""
    from faststream.prometheus.container import MetricsContainer

    exported = Exported()
    container = MetricsContainer(CollectorRegistry(), metrics_prefix=prefix, custom_label_names=())
    for slot in MetricsContainer.__slots__:
        value = getattr(container, slot, None)
        if isinstance(value, MetricWrapperBase):
            exported.add_metric(value)
    return exported


REPO = Path(__file__).resolve().parents[2]


def services_use_faststream_middleware() -> bool:
    sources = [*REPO.joinpath("services").rglob("*.py"), *REPO.joinpath("shared").rglob("*.py")]
    return any("PrometheusMiddleware" in path.read_text(encoding="utf-8") for path in sources)


@pytest.fixture(scope="session")
def exported() -> Exported:
    """Series a dashboard may query: shared/adapters/metrics.py's, the client's default collectors', and
    FastStream's middleware's when a service installs it."""
    allowed = treerag_exports()
    if services_use_faststream_middleware():
        allowed.labels_by_series.update(faststream_exports().labels_by_series)
    return allowed
