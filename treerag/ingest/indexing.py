"""Indexing files into the embedded store, in this process or on several worker processes.

The parent reads every file once to hash it, so what the store already holds (by content hash)
and the same bytes met twice are skipped before any work is handed out. Each worker indexes
whole files and writes them to the store itself: the embedded store writes every file whole
under a name unique to the writing process and renames it into place, and the workers write
different documents, so their writes never meet. A worker holds its own embedder and model
client, loaded once when it starts.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from services.indexer.errors import DocumentError
from services.indexer.pipeline import IndexOptions, index_document
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings import make_embedder
from shared.adapters.llm.client import BaseLLMClient
from shared.adapters.logs import configure_logging
from shared.app.indexing import decide_indexing, next_version
from shared.model.file_names import FileNameError, file_name_label
from shared.model.ids import BuilderChoice, content_id
from shared.model.tree import walk_tree
from shared.ports.model_roles import Embedder
from shared.settings import get_settings
from treerag.llm_options import make_cli_llm

logger = logging.getLogger("treerag.index")

Outcome = Literal["indexed", "skipped", "failed"]


@dataclass(frozen=True)
class IndexJob:
    path: Path
    name: str
    doc_id: str
    size_bytes: int


@dataclass
class FileResult:
    """What happened to one file, and the lines to print about it."""

    path: Path
    outcome: Outcome
    pages: int = 0
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


@dataclass
class Triage:
    """The files to index, and those already settled (skipped or failed) without indexing."""

    jobs: list[IndexJob]
    settled: list[FileResult]


def triage(paths: list[Path], repo: EmbeddedRepository, builder: BuilderChoice, force: bool) -> Triage:
    """Hash every file; keep those the store does not hold (or must rebuild), once per content."""
    jobs: list[IndexJob] = []
    settled: list[FileResult] = []
    taken: dict[str, Path] = {}
    for path in paths:
        try:
            name = file_name_label(path.name, fallback=path.name)
        except FileNameError as exc:
            settled.append(FileResult(path, "failed", err=[f"error: {path!r}: {exc}"]))
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            reason = f"cannot read the file ({exc.strerror or exc}); check the path"
            settled.append(FileResult(path, "failed", err=[f"error: {path}: {reason}"]))
            continue
        doc_id = content_id(data)
        if doc_id in taken:
            settled.append(FileResult(path, "skipped", out=[f"{name}: same content as {taken[doc_id]} ({doc_id})"]))
            continue
        taken[doc_id] = path
        existing = asyncio.run(repo.get_document(doc_id))
        if existing is not None and not decide_indexing(existing, builder, force=force).index:
            line = f"{name}: already indexed as {doc_id} ({existing.page_count} pages, {existing.builder})"
            settled.append(FileResult(path, "skipped", out=[line]))
            continue
        jobs.append(IndexJob(path, name, doc_id, len(data)))
    return Triage(jobs, settled)


class FileIndexer:
    """Indexes one file at a time into the store (the same in the parent and in a worker)."""

    def __init__(self, store: Path, options: IndexOptions, *, llm: BaseLLMClient | None,
                 embedder: Embedder | None) -> None:
        self.repo = EmbeddedRepository(store)
        self.options = options
        self.llm = llm
        self.embedder = embedder

    def index(self, job: IndexJob, progress: Callable[[int], object] | None = None) -> FileResult:
        try:
            return asyncio.run(self._index(job, progress))
        except DocumentError as exc:
            return FileResult(job.path, "failed", err=[f"error: {job.path}: {exc}"])
        except OSError as exc:
            return FileResult(job.path, "failed",
                              err=[f"error: {job.path}: cannot read or store it ({exc.strerror or exc})"])
        except Exception as exc:
            # One file's failure must not stop the others: reported, logged with its trace.
            logger.exception("indexing failed", extra={"fields": {"file": str(job.path)}})
            return FileResult(job.path, "failed",
                              err=[f"error: {job.path}: indexing failed ({type(exc).__name__}: {exc}); "
                                   "see the log (--log-level INFO) and report it"])

    async def _index(self, job: IndexJob, progress: Callable[[int], object] | None) -> FileResult:
        data = job.path.read_bytes()
        doc_id = content_id(data)  # the file may have changed since it was hashed
        existing = await self.repo.get_document(doc_id)
        indexed = index_document(data, job.name, self.options, llm=self.llm, progress=progress,
                                 embedder=self.embedder)
        indexed.record.version = next_version(existing, indexed.record)
        if existing is not None:
            indexed.record.created_at = existing.created_at
        await self.repo.put_pdf(doc_id, data)
        await self.repo.put_indexed(indexed)
        record = indexed.record
        nodes = sum(1 for _ in walk_tree(indexed.tree.nodes))
        verified = sum(1 for n in walk_tree(indexed.tree.nodes) if n.verified)
        line = (f"{job.name}: {doc_id} {record.page_count} pages, {record.builder} tree, "
                f"{nodes} sections ({verified} verified), {record.build_seconds:.2f} s")
        warnings = [f"warning: {job.name}: {w}" for w in record.warnings]
        return FileResult(job.path, "indexed", pages=record.page_count, out=[line], err=warnings)


# ------------------------------------------------------------ worker processes

_worker: FileIndexer | None = None


def cli_options(args: argparse.Namespace) -> IndexOptions:
    settings = get_settings()
    return IndexOptions(
        builder=args.builder, max_pages=args.max_pages, domain=args.domain,
        ocr=args.ocr, ocr_languages=settings.ocr_languages, ocr_workers=settings.ocr_workers,
    )


def _start_worker(args: argparse.Namespace) -> None:
    """Runs once in each worker: the model client and embedder it keeps for every file. The
    parent checked both configurations before starting workers."""
    global _worker
    configure_logging(args.log_level.upper())
    llm = make_cli_llm(args, args.store) if args.builder in ("llm", "auto") else None
    _worker = FileIndexer(args.store, cli_options(args), llm=llm, embedder=make_embedder())


def _run_in_worker(job: IndexJob) -> FileResult:
    if _worker is None:
        raise RuntimeError("worker not started")
    return _worker.index(job)


def index_on_workers(jobs: list[IndexJob], args: argparse.Namespace, workers: int) -> Iterator[FileResult]:
    """Results as files finish. The largest files go first, so no long file starts last."""
    picklable = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "func"})
    ordered = sorted(jobs, key=lambda j: j.size_bytes, reverse=True)
    # Spawned, not forked: a worker starts clean whatever threads the parent runs.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker,
                             initargs=(picklable,)) as pool:
        futures: dict[Future[FileResult], IndexJob] = {pool.submit(_run_in_worker, job): job for job in ordered}
        for future in as_completed(futures):
            job = futures[future]
            try:
                yield future.result()
            except BrokenProcessPool as exc:
                yield FileResult(job.path, "failed", err=[f"error: {job.path}: a worker process died ({exc}); "
                                                          "index it again with fewer --workers"])
