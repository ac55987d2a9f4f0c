"""Every Grafana panel queries series the services export, with labels those series carry."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import promql_parser
import pytest

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "deploy" / "grafana" / "dashboards"
DATASOURCES = REPO / "deploy" / "grafana" / "provisioning" / "datasources"

# Grafana substitutes these before the query reaches Prometheus.
_RANGE_VARIABLES = re.compile(r"\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}")
_TEMPLATE_VARIABLES = re.compile(r"\$\{?\w+\}?")


def dashboard_files() -> list[Path]:
    return sorted(DASHBOARDS.glob("*.json"))


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])  # collapsed rows nest their panels


def queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            yield panel.get("title", "?"), target["expr"]
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            inner = re.fullmatch(r"label_values\((.+),\s*\w+\)", text)
            if inner:
                yield f"variable {variable['name']}", inner.group(1)


def as_promql(expr: str) -> str:
    return _TEMPLATE_VARIABLES.sub("x", _RANGE_VARIABLES.sub("5m", expr))


def selectors(expr: Any) -> list[Any]:
    found: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)

    promql_parser.walk(expr, pre_visit=visit)
    return found


def aggregations(expr: Any) -> list[Any]:
    found: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.AggregateExpr):
            found.append(node)

    promql_parser.walk(expr, pre_visit=visit)
    return found


def test_both_dashboards_are_provisioned() -> None:
    titles = {json.loads(path.read_text())["title"] for path in dashboard_files()}
    assert {"TreeRAG pipeline", "TreeRAG ingestion"} <= titles


@pytest.mark.parametrize("path", dashboard_files(), ids=lambda p: p.name)
def test_every_queried_series_is_exported_with_its_labels(path: Path, exported: Any) -> None:
    dashboard = json.loads(path.read_text())
    problems: list[str] = []
    for title, expr in queries(dashboard):
        try:
            ast = promql_parser.parse(as_promql(expr))
        except Exception as exc:  # the parser raises plain ValueError/RuntimeError subclasses
            problems.append(f"{title}: does not parse ({exc}): {expr}")
            continue
        for selector in selectors(ast):
            name = selector.name
            if not name:
                problems.append(f"{title}: selector without a metric name: {expr}")
                continue
            if not exported.exports(name):
                problems.append(f"{title}: {name} is not exported by any service")
                continue
            known = exported.labels_of(name)
            for matcher in selector.matchers.matchers:
                if matcher.name not in known:
                    problems.append(f"{title}: {name} has no label {matcher.name!r}")
        for aggregation in aggregations(ast):
            modifier = aggregation.modifier
            if modifier is None or modifier.type != promql_parser.AggModifierType.By:
                continue
            below: set[str] = set()
            for selector in selectors(aggregation.expr):
                below |= exported.labels_of(selector.name or "")
            missing = set(modifier.labels) - below
            if missing:
                problems.append(f"{title}: groups by {sorted(missing)}, which no series below carries: {expr}")
    assert not problems, "\n".join(problems)


def queried_series(path: Path) -> set[str]:
    names: set[str] = set()
    for _, expr in queries(json.loads(path.read_text())):
        names |= {s.name for s in selectors(promql_parser.parse(as_promql(expr)))}
    return names


def test_pipeline_dashboard_shows_every_stage_signal() -> None:
    names = queried_series(DASHBOARDS / "pipeline.json")
    expected = {
        "treerag_messages_consumed_total",  # throughput
        "treerag_handler_seconds_bucket",  # latency quantiles
        "treerag_failures_total",  # errors
        "treerag_consumer_lag",
        "treerag_dlq_messages_total",
        "treerag_answer_confidence_bucket",
        "treerag_abstentions_total",
    }
    assert expected <= names, f"pipeline dashboard lacks {sorted(expected - names)}"
    exprs = [expr for _, expr in queries(json.loads((DASHBOARDS / "pipeline.json").read_text()))]
    for quantile in ("0.5", "0.95", "0.99"):
        assert any(
            f"histogram_quantile({quantile}," in e and "treerag_handler_seconds_bucket" in e for e in exprs
        ), f"no p{quantile} handler latency panel"


def test_ingestion_dashboard_shows_pages_outcomes_and_build_time() -> None:
    names = queried_series(DASHBOARDS / "ingestion.json")
    expected = {"treerag_pages_indexed_total", "treerag_documents_total", "treerag_tree_build_seconds_bucket"}
    assert expected <= names, f"ingestion dashboard lacks {sorted(expected - names)}"


@pytest.mark.parametrize("path", dashboard_files(), ids=lambda p: p.name)
def test_dashboard_layout_is_loadable(path: Path) -> None:
    dashboard = json.loads(path.read_text())
    assert dashboard.get("uid") and len(dashboard["uid"]) <= 40, "Grafana needs a uid of at most 40 chars"
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    datasource_uids = provisioned_datasource_uids()
    for panel in panels(dashboard):
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, f"{panel['title']} overflows the 24-column grid"
        if panel["type"] == "row":
            continue
        assert panel["targets"], f"{panel['title']} has no query"
        assert panel["datasource"]["uid"] in datasource_uids, f"{panel['title']} names an unprovisioned datasource"
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), f"{panel['title']} repeats a refId"


def test_dashboard_uids_are_distinct() -> None:
    uids = [json.loads(path.read_text())["uid"] for path in dashboard_files()]
    assert len(uids) == len(set(uids))


def provisioned_datasource_uids() -> set[str]:
    import yaml

    uids: set[str] = set()
    for path in DATASOURCES.glob("*.y*ml"):
        for source in yaml.safe_load(path.read_text()).get("datasources", []):
            uids.add(source["uid"])
    return uids


# Variables Grafana itself defines for every dashboard.
GRAFANA_BUILT_INS = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__range_ms",
                     "__dashboard", "__from", "__to", "__name"}
_USED_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")


@pytest.mark.parametrize("path", dashboard_files(), ids=lambda p: p.name)
def test_every_variable_a_query_uses_is_defined_and_every_variable_queries_a_provisioned_datasource(
    path: Path,
) -> None:
    dashboard = json.loads(path.read_text())
    defined = {v["name"]: v for v in dashboard.get("templating", {}).get("list", [])}
    problems = []
    for title, expr in queries(dashboard):
        for match in _USED_VARIABLE.finditer(expr):
            name = next(group for group in match.groups() if group)
            if name not in defined and name not in GRAFANA_BUILT_INS:
                problems.append(f"{title}: ${name} is not a variable of this dashboard")
    for name, variable in defined.items():
        if variable.get("type") == "query":
            source = variable.get("datasource") or {}
            if source.get("uid") not in provisioned_datasource_uids():
                problems.append(f"variable {name}: datasource {source!r} is not provisioned")
            query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
            if not re.fullmatch(r"label_values\(.+,\s*\w+\)", query):
                problems.append(f"variable {name}: {query!r} is not a label_values(series, label) query")
    assert not problems, "\n".join(problems)
