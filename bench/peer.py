"""Peer test: TreeRAG's own benchmarks (medical, Korean, 42 questions; govreport, 40) on TreeRAG's
own trees, imported through shared.model.interop. There are no PDFs, so no page text: nodes are
scored on their titles and summaries only. BM25 over the same nodes runs in the same pass.

    python -m bench.peer

Metrics per system: section recall (share of `expected_sections` among the returned nodes),
section hit@1 (the first returned node is expected), ROUGE-L of the answer against
`expected_answer_hint`, and mean returned nodes. Writes bench/results/peer.json (+ .md).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import (
    RESULTS,
    configure_bench_logging,
    latency_summary,
    shared_data,
    write_result,
)
from services.navigator.index import DocumentIndex
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.interop import import_treerag_index
from shared.model.query import CompressedContext, Passage, QuerySettings
from shared.text.citations import strip_citations
from shared.text.lexical import BM25Index, query_terms, terms
from treerag.evaluation.asking import Asker
from treerag.evaluation.metrics import rouge_l
from treerag.pipeline import ask_result

BENCHMARKS = ("medical_benchmark.json", "govreport_benchmark.json")
BM25_TOP_K = 5
# MISSION.md gives no TreeRAG figure for these two sets (its ROUGE-L 0.451 is on a different,
# 204-question general set), so ours stand alone beside BM25.
PUBLISHED: dict[str, Any] = {"note": "no published TreeRAG figures for these two benchmarks in MISSION.md"}


def load_index(path: Path) -> DocumentIndex:
    doc_id = path.stem
    tree = import_treerag_index(json.loads(path.read_text(encoding="utf-8")), doc_id)
    record = DocumentRecord(doc_id=doc_id, file_name=path.name, status=DocumentStatus.READY,
                            page_count=max(n.page_end for n in tree.nodes))
    return DocumentIndex.build(record, tree, pages=[])


def bm25_nodes(index: DocumentIndex, question: str, k: int = BM25_TOP_K) -> list[Passage]:
    nodes = [f.node for f in index.nodes]
    bm25 = BM25Index([terms(f"{n.title} {n.summary}") for n in nodes])
    scores = bm25.scores(query_terms(question))
    order = np.argsort(-scores, kind="stable")[:k]
    best = float(scores[order[0]]) if len(order) and scores[order[0]] > 0 else 1.0
    return [
        Passage(doc_id=index.doc_id, file_name=index.label, node_id=nodes[i].id, title=nodes[i].title,
                pages=[nodes[i].page_start], text=f"{nodes[i].title}. {nodes[i].summary}".strip(),
                score=float(scores[i]) / best)
        for i in order if scores[i] > 0
    ]


def score(passages: list[Passage], answer_text: str, expected: list[str], hint: str) -> dict[str, float]:
    returned = list(dict.fromkeys(p.node_id for p in passages))
    gold = set(expected)
    return {
        "section_recall": sum(g in returned for g in gold) / len(gold) if gold else 0.0,
        "section_hit_at_1": float(bool(returned) and returned[0] in gold),
        "rouge_l": rouge_l(answer_text, hint),
        "returned": float(len(returned)),
    }


def run_benchmark(path: Path, indices: Path) -> dict[str, Any]:
    payload = json.loads(path.read_text(encoding="utf-8"))
    questions = payload["questions"]
    indexes: dict[str, DocumentIndex] = {}
    per_system: dict[str, list[dict[str, float]]] = {}
    seconds: dict[str, list[float]] = {}
    asker = Asker()
    for q in questions:
        name = q["document_id"]
        if name not in indexes:
            indexes[name] = load_index(indices / name)
        index = indexes[name]
        for system in ("treerag-dfs", "treerag-beam", "treerag-auto", "bm25-nodes"):
            settings = QuerySettings(mode=system.removeprefix("treerag-") if system.startswith("treerag") else "auto")
            started = time.perf_counter()
            if system == "bm25-nodes":
                passages = bm25_nodes(index, q["question"])
                context = CompressedContext(question=q["question"], passages=passages, tokens_before=0, tokens_after=0)
                answer = asker.verify(context, [index], settings)
            else:
                run = asker.ask(q["question"], [index], settings)
                passages = run.navigation.passages if run.navigation else []
                answer = ask_result(run).answer
            seconds.setdefault(system, []).append(time.perf_counter() - started)
            text = "" if answer.abstained else strip_citations(answer.answer)
            per_system.setdefault(system, []).append(
                score(passages, text, q["expected_sections"], q["expected_answer_hint"])
            )
    systems = {
        name: {
            **{metric: round(statistics.fmean(r[metric] for r in rows), 4) for metric in rows[0]},
            "latency": latency_summary(seconds[name]),
        }
        for name, rows in per_system.items()
    }
    return {"benchmark": path.stem, "n": len(questions), "documents": len(indexes), "systems": systems}


def markdown(results: list[dict[str, Any]]) -> str:
    lines = []
    for r in results:
        lines.append(f"### {r['benchmark']} (n={r['n']}, {r['documents']} trees)\n")
        lines.append("| system | section recall | section hit@1 | ROUGE-L | nodes returned | p50 ms |")
        lines.append("|---|---|---|---|---|---|")
        for name, s in r["systems"].items():
            lines.append(
                f"| {name} | {s['section_recall']:.3f} | {s['section_hit_at_1']:.3f} | {s['rouge_l']:.3f} "
                f"| {s['returned']:.1f} | {s['latency']['p50_ms']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    configure_bench_logging()
    root = shared_data() / "treerag"
    results = [run_benchmark(root / "benchmarks" / name, root / "indices") for name in BENCHMARKS]
    write_result("peer", {"results": results, "published": PUBLISHED})
    table = markdown(results)
    (RESULTS / "peer.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
