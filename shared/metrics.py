"""Prometheus metrics of every stage. One definition, imported by the services that emit them.

Names are part of the dashboards' contract (deploy/grafana/dashboards/*.json).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

MESSAGES_CONSUMED = Counter(
    "treerag_messages_consumed_total", "Events consumed, by topic and stage.", ["stage", "topic"]
)
MESSAGES_PUBLISHED = Counter(
    "treerag_messages_published_total", "Events published, by topic and stage.", ["stage", "topic"]
)
HANDLER_SECONDS = Histogram(
    "treerag_handler_seconds", "Handler processing time per stage.", ["stage"], buckets=LATENCY_BUCKETS
)
QUEUE_SECONDS = Histogram(
    "treerag_queue_seconds",
    "Time an event waited between being produced and being handled.",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
FAILURES = Counter("treerag_failures_total", "Handler failures, by stage and reason class.", ["stage", "reason"])
DLQ_MESSAGES = Counter("treerag_dlq_messages_total", "Messages sent to a dead-letter topic.", ["stage", "topic"])
CONSUMER_LAG = Gauge(
    "treerag_consumer_lag", "Messages behind the partition end.", ["stage", "topic", "partition"]
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
LLM_CALLS = Counter("treerag_llm_calls_total", "LLM calls, by purpose and outcome.", ["purpose", "outcome"])
LLM_TOKENS = Counter("treerag_llm_tokens_total", "LLM tokens, by direction.", ["direction"])
SCORER_FALLBACKS = Counter("treerag_scorer_fallbacks_total", "LLM node scoring failures that fell back to lexical.")
INFLIGHT_QUERIES = Gauge("treerag_gateway_inflight_queries", "Queries waiting for an answer at the gateway.")
HTTP_SECONDS = Histogram(
    "treerag_http_request_seconds", "Gateway HTTP latency.", ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
