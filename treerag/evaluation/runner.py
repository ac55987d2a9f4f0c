"""Side-by-side evaluation: every question through the tree systems and the flat baselines,
in one run, answered by the same verifier, scored by the same metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from services.compressor.tokens import count_tokens
from services.navigator.index import DocumentIndex
from services.navigator.index_cache import IndexCache, NoDocumentsError
from shared.model.documents import DocumentStatus
from shared.model.query import CompressedContext, QuerySettings, VerifiedAnswer
from shared.ports.repository import Repository
from treerag.evaluation.asking import Asker
from treerag.evaluation.baselines import FlatIndex, chunk_index, page_index
from treerag.evaluation.dataset import QAItem
from treerag.evaluation.metrics import ItemScore, SystemScores, aggregate, score_item
from treerag.pipeline import ask_result

logger = logging.getLogger(__name__)

SYSTEMS = ("treerag-dfs", "treerag-beam", "treerag-auto", "bm25-pages", "bm25-chunks")


class EvalResults(BaseModel):
    dataset: str
    n: int
    systems: dict[str, SystemScores]


class EvalReport(BaseModel):
    results: EvalResults
    items: dict[str, list[ItemScore]]


@dataclass
class DocumentBundle:
    index: DocumentIndex
    pages: FlatIndex
    chunks: FlatIndex


class MissingDocumentError(FileNotFoundError):
    pass


async def ensure_indexed(repository: Repository, file_names: list[str], pdf_dir: Path) -> dict[str, DocumentBundle]:
    """Load each named document's tree and pages from the store, indexing it first if needed."""
    bundles: dict[str, DocumentBundle] = {}
    loader = IndexCache(repository)
    for name in sorted(set(file_names)):
        record = await repository.find_document(name)
        if record is None or record.status != DocumentStatus.READY:
            path = pdf_dir / name
            if not path.is_file():
                # A folder of folders (e.g. one per collection) works too.
                path = next(iter(sorted(pdf_dir.rglob(name))), path)
            if not path.is_file():
                raise MissingDocumentError(
                    f"{name} is neither in the store nor in {pdf_dir}; pass --pdfs with the folder holding it"
                )
            from services.indexer.pipeline import (  # the indexer is optional here
                IndexOptions,
                index_document,
            )

            logger.info("indexing %s", name)
            indexed = index_document(path.read_bytes(), name, IndexOptions())
            await repository.put_indexed(indexed)
            record = indexed.record
        # The index `treerag ask` builds for the record: the same loading, the same preparation.
        try:
            index = await loader.index(record)
        except NoDocumentsError as exc:
            raise MissingDocumentError(f"{name}: {exc}") from exc
        bundles[name] = DocumentBundle(
            index=index,
            pages=page_index(record, index.pages),
            chunks=chunk_index(record, index.pages),
        )
    return bundles


Answerer = Callable[[QAItem, DocumentBundle, QuerySettings, Asker], tuple[VerifiedAnswer, int]]


def _tree_system(mode: str) -> Answerer:
    def run(item: QAItem, bundle: DocumentBundle, settings: QuerySettings, asker: Asker) -> tuple[VerifiedAnswer, int]:
        result = ask_result(asker.ask(item.question, [bundle.index], settings.model_copy(update={"mode": mode})))
        return result.answer, result.tokens_after

    return run


def _flat_system(kind: str) -> Answerer:
    def run(item: QAItem, bundle: DocumentBundle, settings: QuerySettings, asker: Asker) -> tuple[VerifiedAnswer, int]:
        flat = bundle.pages if kind == "pages" else bundle.chunks
        passages = flat.search(item.question)
        tokens = sum(count_tokens(p.text) for p in passages)
        context = CompressedContext(
            question=item.question, passages=passages, tokens_before=tokens, tokens_after=tokens
        )
        return asker.verify(context, [bundle.index], settings), tokens

    return run


ANSWERERS: dict[str, Answerer] = {
    "treerag-dfs": _tree_system("dfs"),
    "treerag-beam": _tree_system("beam"),
    "treerag-auto": _tree_system("auto"),
    "bm25-pages": _flat_system("pages"),
    "bm25-chunks": _flat_system("chunks"),
}


def evaluate(
    dataset_name: str,
    items: list[QAItem],
    bundles: dict[str, DocumentBundle],
    settings: QuerySettings | None = None,
    systems: tuple[str, ...] = SYSTEMS,
    answers: dict[tuple[str, str], VerifiedAnswer] | None = None,
) -> EvalReport:
    """Score every system on every item; `answers`, when given, receives each answer keyed by
    (system, item id), for whatever judges them afterwards."""
    settings = settings or QuerySettings()
    per_system: dict[str, list[ItemScore]] = {name: [] for name in systems}
    asker = Asker()
    for item in items:
        bundle = bundles[item.doc]
        for name in systems:
            started = time.perf_counter()
            answer, tokens = ANSWERERS[name](item, bundle, settings, asker)
            latency = (time.perf_counter() - started) * 1000
            per_system[name].append(score_item(item, answer, tokens, latency, bundle.index.doc_id))
            if answers is not None:
                answers[(name, item.id)] = answer
    results = EvalResults(
        dataset=dataset_name, n=len(items), systems={name: aggregate(scores) for name, scores in per_system.items()}
    )
    return EvalReport(results=results, items=per_system)


def markdown_table(results: EvalResults) -> str:
    header = (
        "| system | hit@1 | page precision | page recall | answer F1 | ROUGE-L | abstention acc. "
        "| context tokens | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for name, s in results.systems.items():
        abstention = "n/a" if s.abstention_accuracy is None else f"{s.abstention_accuracy:.2f}"
        rows.append(
            f"| {name} | {s.hit_at_1:.3f} | {s.evidence_page_precision:.3f} | {s.evidence_page_recall:.3f} "
            f"| {s.answer_f1:.3f} | {s.rouge_l:.3f} | {abstention} | {s.context_tokens_mean:.0f} "
            f"| {s.latency_ms_p50:.1f} | {s.latency_ms_p95:.1f} |"
        )
    return f"### {results.dataset} (n={results.n})\n\n" + header + "\n".join(rows) + "\n"
