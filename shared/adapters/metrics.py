"""Prometheus metrics of every stage. One definition, imported by the services that emit them.

Names are part of the dashboards' contract (deploy/grafana/dashboards/*.json); a test checks
that every metric a dashboard queries is defined here.

Several worker processes per stage: set PROMETHEUS_MULTIPROC_DIR (an empty folder, shared by
the workers of one stage, wiped before they start) in the environment *before* Python starts.
prometheus-client then keeps values in memory-mapped files and `metrics_registry()` aggregates
them; the first worker that binds the stage's port serves /metrics for all of them.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import socket
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, get_args
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


def multiprocess_dir() -> Path | None:
    """The folder of multiprocess mode, or None when each process keeps its own metrics."""
    # The client library reads the lower-case name too (its older spelling).
    value = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.environ.get("prometheus_multiproc_dir")  # noqa: SIM112
    return Path(value) if value else None


# prometheus-client opens its value files as soon as a metric is defined (below), so the folder
# must exist before then; a missing one would otherwise fail at import with a bare path error.
if (_directory := multiprocess_dir()) is not None:
    _directory.mkdir(parents=True, exist_ok=True)

from prometheus_client import (  # noqa: E402
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    make_wsgi_app,
)
from prometheus_client.exposition import ThreadingWSGIServer  # noqa: E402
from prometheus_client.metrics_core import CounterMetricFamily, Metric  # noqa: E402

from shared.adapters.health import StageHealth, with_health  # noqa: E402
from shared.adapters.logs import log_fields  # noqa: E402
from shared.model.documents import BuilderName  # noqa: E402
from shared.model.query import NavigationResult  # noqa: E402

logger = logging.getLogger(__name__)

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

# Default /metrics port of each process, served without a key for scrapers (loopback unless
# TREERAG_METRICS_HOST). The gateway serves it when TREERAG_METRICS_PORT is set (`make up` and
# compose set it); its HTTP port's /metrics asks for an admin key.
STAGE_METRICS_PORTS: dict[str, int] = {
    "gateway": 9100,
    "indexer": 9101,
    "navigator": 9102,
    "compressor": 9103,
    "verifier": 9104,
}

MESSAGES_CONSUMED = Counter(
    "treerag_messages_consumed_total", "Events consumed, by topic and stage.", ["stage", "topic"]
)
MESSAGES_PUBLISHED = Counter(
    "treerag_messages_published_total", "Events published, by topic and stage.", ["stage", "topic"]
)
HANDLER_SECONDS = Histogram(
    "treerag_handler_seconds", "Handler processing time per stage.", ["stage"], buckets=LATENCY_BUCKETS
)
PUBLISH_SECONDS = Histogram(
    "treerag_publish_seconds",
    "Time from sending an event to the broker's acknowledgement, per publishing stage.",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
QUEUE_SECONDS = Histogram(
    "treerag_queue_seconds",
    "Time an event waited between being produced and being handled.",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
FAILURES = Counter("treerag_failures_total", "Handler failures, by stage and reason class.", ["stage", "reason"])
DLQ_MESSAGES = Counter("treerag_dlq_messages_total", "Messages sent to a dead-letter topic.", ["stage", "topic"])
BACKEND_UP = Gauge(
    "treerag_backend_up", "1 when this process's last check reached the backend (kafka, mongodb), else 0.", ["backend"],
    multiprocess_mode="livemostrecent",
)


def record_backend_checks(checks: Mapping[str, str]) -> None:
    """A stage's health-check outcomes as `treerag_backend_up`, what the alerts on Kafka and the
    store read (deploy/prometheus/rules)."""
    for backend, outcome in checks.items():
        BACKEND_UP.labels(backend=backend).set(1.0 if outcome == "ok" else 0.0)
# A partition is owned by one consumer at a time: the latest reading of a live process wins.
CONSUMER_LAG = Gauge(
    "treerag_consumer_lag",
    "Messages behind the partition end (end offset minus committed offset).",
    ["stage", "topic", "partition"],
    multiprocess_mode="livemostrecent",
)
PAGES_INDEXED = Counter("treerag_pages_indexed_total", "Pages extracted and stored.", ["builder"])
DOCUMENTS = Counter("treerag_documents_total", "Documents finished, by outcome.", ["status"])
TREE_BUILD_SECONDS = Histogram(
    "treerag_tree_build_seconds", "Whole indexing time per document, by builder.", ["builder"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
NODES_VISITED = Histogram(
    "treerag_nodes_visited", "Tree nodes visited per query.", ["mode"],
    buckets=(1, 5, 10, 25, 50, 100, 250, 500, 1000, 5000),
)
TOKENS = Histogram(
    "treerag_context_tokens", "Context tokens per query before and after compression.", ["phase"],
    buckets=(50, 100, 250, 500, 1000, 2000, 4000, 8000, 16000, 64000),
)
ANSWER_CONFIDENCE = Histogram(
    "treerag_answer_confidence", "Verifier confidence per answer.",
    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
)
ABSTENTIONS = Counter("treerag_abstentions_total", "Answers that abstained.")
CACHE_HITS = Counter("treerag_cache_hits_total", "Cache hits, by cache.", ["cache"])
CACHE_MISSES = Counter("treerag_cache_misses_total", "Cache misses, by cache.", ["cache"])
CACHE_WRITE_SECONDS = Histogram(
    "treerag_cache_write_seconds",
    "Time to write an entry to a cache's store copy, by cache (the verifier's runs beside its send).",
    ["cache"],
    buckets=LATENCY_BUCKETS,
)
LLM_CALLS = Counter("treerag_llm_calls_total", "LLM calls, by purpose and outcome.", ["purpose", "outcome"])
LLM_TOKENS = Counter("treerag_llm_tokens_total", "LLM tokens, by direction.", ["direction"])
SCORER_FALLBACKS = Counter("treerag_scorer_fallbacks_total", "LLM node scoring failures that fell back to lexical.")
# Summed over the gateway's worker processes; a dead worker's queries no longer count.
INFLIGHT_QUERIES = Gauge(
    "treerag_gateway_inflight_queries",
    "Queries waiting for an answer at the gateway.",
    multiprocess_mode="livesum",
)
HTTP_SECONDS = Histogram(
    "treerag_http_request_seconds", "Gateway HTTP latency.", ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
QUERIES = Counter(
    "treerag_queries_total",
    "Queries a client waited for at the gateway, by outcome (answered, abstained, failed, timeout).",
    ["outcome"],
)
QUERY_STAGE_SECONDS = Histogram(
    "treerag_query_stage_seconds",
    "Per-query time at each stage as reported in the finished query's timings (queued or processing).",
    ["stage", "phase"],
    buckets=LATENCY_BUCKETS,
)

# Label values known before anything happens. Their series are exported at zero from the start,
# so a panel tells "none yet" from "no data", and rate() counts the first event after a restart
# (a series that appears at 1 has no earlier sample to rise from).
QUERY_STAGES = ("navigator", "compressor", "verifier")
QUERY_OUTCOMES = ("answered", "abstained", "failed", "timeout")
QUERY_PHASES = ("queued", "processing")
DOCUMENT_OUTCOMES = ("ready", "failed")
BUILDERS = (*(builder.value for builder in BuilderName), "unknown")
NAVIGATION_MODES: tuple[str, ...] = get_args(NavigationResult.model_fields["mode"].annotation)
TOKEN_PHASES = ("before", "after")
CACHES = ("answer", "llm")
# The purposes the stages name in their model calls (indexer, navigator, verifier).
LLM_PURPOSES = ("tree", "summaries", "scoring", "answer")
LLM_OUTCOMES = ("ok", "cached", "malformed", "retried", "failed")
LLM_DIRECTIONS = ("input", "output")
# Failure reasons the delivery layer names itself; a handler's own errors are counted under their
# exception class, which is not known in advance.
DELIVERY_FAILURE_REASONS = ("invalid_event", "deadline_expired", "ledger_unavailable")


def export_known_series(stage: str, consumed: Iterable[str] = (), produced: Iterable[str] = ()) -> None:
    """Create, at zero, every series this process may later update whose labels are known now.

    `consumed`: the (prefixed) topics the process handles through the delivery layer (handler,
    queue, failure and dead-letter series); `produced`: the topics it publishes. The domain
    series (documents, pages, queries, model calls...) are created in every process: a process
    that never does the work reports a true zero, and every panel sums over processes.
    """
    consumed = list(consumed)
    for topic in consumed:
        MESSAGES_CONSUMED.labels(stage, topic)
        DLQ_MESSAGES.labels(stage, topic)
        MESSAGES_PUBLISHED.labels(stage, f"{topic}.dlq")
    for topic in produced:
        MESSAGES_PUBLISHED.labels(stage, topic)
    if produced:
        PUBLISH_SECONDS.labels(stage)
    if consumed:
        HANDLER_SECONDS.labels(stage)
        QUEUE_SECONDS.labels(stage)
        for reason in DELIVERY_FAILURE_REASONS:
            FAILURES.labels(stage, reason)
    for outcome in DOCUMENT_OUTCOMES:
        DOCUMENTS.labels(status=outcome)
    for builder in BUILDERS:
        PAGES_INDEXED.labels(builder=builder)
        TREE_BUILD_SECONDS.labels(builder=builder)
    for mode in NAVIGATION_MODES:
        NODES_VISITED.labels(mode=mode)
    for phase in TOKEN_PHASES:
        TOKENS.labels(phase=phase)
    for cache in CACHES:
        CACHE_HITS.labels(cache=cache)
        CACHE_MISSES.labels(cache=cache)
        CACHE_WRITE_SECONDS.labels(cache=cache)
    for purpose in LLM_PURPOSES:
        for outcome in LLM_OUTCOMES:
            LLM_CALLS.labels(purpose=purpose, outcome=outcome)
    for direction in LLM_DIRECTIONS:
        LLM_TOKENS.labels(direction=direction)
    for outcome in QUERY_OUTCOMES:
        QUERIES.labels(outcome=outcome)
    for query_stage in QUERY_STAGES:
        for phase in QUERY_PHASES:
            QUERY_STAGE_SECONDS.labels(query_stage, phase)


def export_http_series(endpoints: Iterable[tuple[str, str, int]]) -> None:
    """Create, at zero, the latency series of every (method, route, status) an HTTP app declares."""
    for method, route, status in endpoints:
        HTTP_SECONDS.labels(method, route, str(status))


class StageTimingLike(Protocol):
    """One entry of a query's per-stage timings (`shared.model.events.StageTiming`)."""

    stage: str
    queued_ms: float
    processing_ms: float


def record_finished_query(outcome: str, timings: Iterable[StageTimingLike]) -> None:
    """Count a query a client waited for, and where its time went by stage."""
    QUERIES.labels(outcome=outcome).inc()
    for timing in timings:
        QUERY_STAGE_SECONDS.labels(timing.stage, "queued").observe(timing.queued_ms / 1000)
        QUERY_STAGE_SECONDS.labels(timing.stage, "processing").observe(timing.processing_ms / 1000)


_PID_IN_FILE = re.compile(r"_(\d+)\.db$")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _process_cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # utime and stime are fields 14 and 15 of /proc/<pid>/stat; index 0 here is field 3.
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


class WorkersCpuCollector:
    """`process_cpu_seconds_total` summed over the live workers that write to the multiprocess dir.

    The stock process collector only sees the serving process; this keeps the CPU-per-stage
    panels and the benchmark right when a stage runs several workers. A worker that exits takes
    its CPU time with it, which Prometheus' rate() treats as a counter reset.
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory

    def worker_pids(self) -> set[int]:
        pids = {int(m.group(1)) for p in self._directory.glob("*.db") if (m := _PID_IN_FILE.search(p.name))}
        return pids | {os.getpid()}

    def collect(self) -> Iterable[Metric]:
        total = sum(cpu for pid in self.worker_pids() if (cpu := _process_cpu_seconds(pid)) is not None)
        family = CounterMetricFamily(
            "process_cpu_seconds", "Total user and system CPU time of the stage's live workers in seconds."
        )
        family.add_metric([], total)
        yield family


def metrics_registry() -> CollectorRegistry:
    """The registry to expose: the process' own, or the aggregate of all workers in multiprocess mode."""
    directory = multiprocess_dir()
    if directory is None:
        return REGISTRY
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(directory))
    registry.register(WorkersCpuCollector(directory))
    return registry


def render_metrics() -> tuple[bytes, str]:
    """Body and content type of a /metrics response (for the gateway's own HTTP route)."""
    return generate_latest(metrics_registry()), CONTENT_TYPE_LATEST


def _mark_dead_at_exit() -> None:
    directory = multiprocess_dir()
    if directory is None:
        return
    from prometheus_client import multiprocess

    pid = os.getpid()
    # Live gauges (lag, in-flight) must stop counting once this worker is gone.
    atexit.register(lambda: multiprocess.mark_process_dead(pid, str(directory)))


_serving: dict[int, WSGIServer] = {}


class _QuietHandler(WSGIRequestHandler):
    """No line on stderr per scrape or probe."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class' name
        return None


def _serve(port: int, addr: str, health: StageHealth | None) -> WSGIServer:
    app = make_wsgi_app(metrics_registry())
    # An IPv6 address (TREERAG_METRICS_HOST=::) needs a server of that family.
    family = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)[0][0]
    server_class = type("MetricsServer", (ThreadingWSGIServer,), {"address_family": family})
    server: WSGIServer = make_server(addr, port, with_health(app, health) if health else app, server_class,
                         handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name=f"metrics-{port}", daemon=True).start()
    return server


def start_metrics_server(port: int, addr: str = "127.0.0.1", health: StageHealth | None = None) -> bool:
    """Serve /metrics for this stage process on `addr:port` in a daemon thread (loopback unless
    TREERAG_METRICS_HOST says otherwise: a container's scraper needs 0.0.0.0 inside its network),
    and /healthz and /readyz from `health` when given (the probes of an orchestrator).

    Returns True when this process serves, False when the port is taken by another worker of the
    same stage in multiprocess mode (that worker then serves the aggregate, so this one only
    writes its values). Outside multiprocess mode a taken port is an error: two processes would
    each expose a part of the stage's metrics.
    """
    _mark_dead_at_exit()
    if port in _serving:
        return True
    directory = multiprocess_dir()
    try:
        _serving[port] = _serve(port, addr, health)
    except OSError as exc:
        if directory is not None:
            logger.info(
                "metrics port taken by another worker of this stage; it serves the aggregate",
                extra=log_fields(port=port, pid=os.getpid()),
            )
            return False
        raise RuntimeError(
            f"cannot serve metrics on {addr}:{port} ({exc}); set TREERAG_METRICS_PORT to a free port, "
            "or set PROMETHEUS_MULTIPROC_DIR when several workers of one stage share a port"
        ) from exc
    logger.info("serving metrics", extra=log_fields(port=port, addr=addr, multiprocess=directory is not None))
    return True


class LagConsumer(Protocol):
    """The part of `aiokafka.AIOKafkaConsumer` the lag collector uses."""

    def assignment(self) -> set[Any]: ...

    async def end_offsets(self, partitions: list[Any]) -> dict[Any, int]: ...

    async def committed(self, partition: Any) -> int | None: ...

    async def position(self, partition: Any) -> int: ...


_recorded_partitions: dict[str, set[tuple[str, int]]] = {}


async def record_consumer_lag(stage: str, consumer: LagConsumer, *, committed: bool = True) -> dict[tuple[str, int], int]:
    """Set `treerag_consumer_lag` for every partition assigned to `consumer`; return the readings.

    Lag is the partition's end offset minus the group's committed offset (messages not yet
    processed, since offsets are committed after the output is stored), or minus the fetch
    position with `committed=False` (messages not yet fetched, no coordinator round trip).
    Partitions this process no longer owns after a rebalance are dropped from the gauge.
    Call it every few seconds from the stage process (see `run_lag_reporter`).
    """
    partitions = list(consumer.assignment())
    readings: dict[tuple[str, int], int] = {}
    if partitions:
        ends = await consumer.end_offsets(partitions)
        for tp in partitions:
            end = ends.get(tp)
            if end is None:
                continue
            done = await consumer.committed(tp) if committed else await consumer.position(tp)
            # No commit yet: everything up to the end is still to be processed.
            readings[(tp.topic, tp.partition)] = max(0, end - (done or 0))
    for (topic, partition), lag in readings.items():
        CONSUMER_LAG.labels(stage=stage, topic=topic, partition=str(partition)).set(lag)
    previous = _recorded_partitions.get(stage, set())
    # In multiprocess mode removing a label does not reach the files; the new owner's readings
    # are more recent and win, so stale partitions are simply no longer written.
    if multiprocess_dir() is None:
        for topic, partition in previous - readings.keys():
            try:
                CONSUMER_LAG.remove(stage, topic, str(partition))
            except KeyError:
                pass
    _recorded_partitions[stage] = set(readings)
    return readings


async def run_lag_reporter(stage: str, consumer: LagConsumer, interval_s: float = 5.0) -> None:
    """Record the consumer lag every `interval_s` until cancelled; errors are logged, not raised."""
    import asyncio

    while True:
        try:
            await record_consumer_lag(stage, consumer)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broker hiccup must not stop the stage
            logger.warning("consumer lag not recorded", extra=log_fields(stage=stage, error=repr(exc)))
        await asyncio.sleep(interval_s)
