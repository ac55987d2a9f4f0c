"""`treerag eval --dataset FILE.jsonl --pdfs DIR --out RESULTS.json`: every question through the
tree systems and the BM25 baselines in one run; writes RESULTS.json and RESULTS.md.
`--judge` adds an LLM judge's faithfulness, relevance and completeness means per system."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

from services.verifier.judge import JudgeScores, judge_answer
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.client import BaseLLMClient
from shared.adapters.llm.errors import LLMConfigError, LLMError
from shared.adapters.logs import log_fields
from shared.adapters.reranker import RerankerModelError
from shared.model.query import Passage, VerifiedAnswer
from shared.settings import get_settings
from treerag.evaluation.dataset import DatasetError, QAItem, load_dataset
from treerag.evaluation.folds import SPLITS
from treerag.evaluation.runner import (
    SYSTEMS,
    DocumentBundle,
    EvalReport,
    MissingDocumentError,
    ensure_indexed,
    evaluate,
    markdown_table,
)
from treerag.evaluation.self_pairs import PAGES_PER_DOCUMENT
from treerag.llm_options import (
    HOW_TO_CONFIGURE,
    add_llm_arguments,
    make_cli_llm,
    usage_line,
)

logger = logging.getLogger("treerag.eval")

JUDGE_CRITERIA = ("faithfulness", "relevance", "completeness")
# The pool's documents: the formats the indexer reads, told apart by extension.
POOL_SUFFIXES = (".pdf", ".docx", ".html", ".htm", ".md", ".markdown", ".txt")
# What the judge is told an unanswerable item's reference answer is.
NOT_IN_DOCUMENTS = "The documents do not contain this information; the right answer says so."
# Sources shown to the judge for an answer that cites nothing (an abstention): the pages a
# reader would check first, so the judge can tell whether abstaining was right.
FALLBACK_SOURCE_PAGES = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    settings = get_settings()
    parser = subparsers.add_parser("eval", help="Evaluate TreeRAG against BM25 baselines on a question set.")
    parser.add_argument(
        "--dataset", type=Path, required=True, nargs="+",
        help="Questions, JSON Lines (with --folds, several sets are pooled into one cross-validation).",
    )
    parser.add_argument("--pdfs", type=Path, required=True, help="Folder holding the PDFs the questions name.")
    parser.add_argument("--out", type=Path, required=True, help="RESULTS.json to write (RESULTS.md beside it).")
    parser.add_argument("--store", type=Path, default=settings.store_dir, help="Store folder (default ./data).")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"Comma-separated subset of: {', '.join(SYSTEMS)}."
    )
    parser.add_argument("--items", action="store_true", help="Also write per-question scores (RESULTS.items.json).")
    parser.add_argument(
        "--judge", action="store_true",
        help="Score every answer with the model as judge (faithfulness, relevance, completeness); needs a model.",
    )
    parser.add_argument(
        "--folds", type=int, default=0,
        help="Cross-validate: fit the ranking model on K-1 folds of documents, report the held-out folds.",
    )
    parser.add_argument(
        "--corpus", action="store_true",
        help="Ask each question of every document of its set at once (routing accuracy); without --folds, "
        "with the shipped models.",
    )
    parser.add_argument(
        "--split", choices=SPLITS, default="document",
        help="With --folds: what a fold holds: documents, a company's documents (the 'company' field of the "
        "questions), or a whole question set (leave-one-collection-out: one fold per --dataset; --folds is "
        "then ignored).",
    )
    parser.add_argument(
        "--pool", type=Path, default=None,
        help="With --corpus: a folder whose every document joins the store the questions are asked of "
        "(a shared store), not only the documents the questions name.",
    )
    parser.add_argument(
        "--self-pairs", type=int, default=PAGES_PER_DOCUMENT, metavar="N",
        help="With --folds: pages of each training document turned into routing questions of its own "
        f"(default {PAGES_PER_DOCUMENT}; 0: the router learns from the labelled questions alone).",
    )
    parser.add_argument(
        "--recipe", choices=("shipped", "nested"), default="shipped",
        help="With --folds: fit as the shipped models are (logistic ranker, 3 %% abstention budget), or choose "
        "the ranker (logistic, or boosted trees of depth 2 or 3 with 50 or 100 trees) and the budget by nested "
        "cross-validation.",
    )
    add_llm_arguments(parser)
    parser.set_defaults(func=run)


class JudgeMeans(BaseModel):
    """One system's judge scores: means over the answers the judge scored."""

    faithfulness: float | None
    relevance: float | None
    completeness: float | None
    judged: int
    failures: int


class JudgeReport(BaseModel):
    model: str
    systems: dict[str, JudgeMeans]


async def load_bundles(dataset: Path, pdfs: Path, store: Path) -> tuple[list[QAItem], dict[str, DocumentBundle]]:
    items = load_dataset(dataset)
    repository = EmbeddedRepository(store)
    try:
        bundles = await ensure_indexed(repository, [item.doc for item in items], pdfs)
    finally:
        await repository.close()
    return items, bundles


async def load_pool(names: list[str], folder: Path, store: Path) -> dict[str, DocumentBundle]:
    """Every document of a shared-store folder, indexed into `store` when not there yet."""
    repository = EmbeddedRepository(store)
    try:
        return await ensure_indexed(repository, names, folder)
    finally:
        await repository.close()


async def load_collections(
    datasets: list[Path], pdfs: Path, store: Path
) -> tuple[dict[str, list[QAItem]], dict[str, DocumentBundle]]:
    """Several question sets (named by file stem) and every document they name, from one store."""
    collections: dict[str, list[QAItem]] = {}
    bundles: dict[str, DocumentBundle] = {}
    for dataset in datasets:
        items, found = await load_bundles(dataset, pdfs, store)
        collections[dataset.stem] = items
        bundles.update(found)
    return collections, bundles


def judge_sources(answer: VerifiedAnswer, item: QAItem, bundle: DocumentBundle) -> list[Passage]:
    """The pages the answer cites, each in full; for an answer citing nothing, the document's
    best BM25 pages for the question."""
    label = bundle.index.record.file_name or bundle.index.doc_id
    passages: list[Passage] = []
    seen: set[int] = set()
    for citation in answer.citations:
        for page in citation.pages:
            text = bundle.index.page_text(page)
            if page in seen or not text:
                continue
            seen.add(page)
            passages.append(Passage(doc_id=citation.doc_id, file_name=label, node_id=citation.node_id,
                                    pages=[page], text=text))
    return passages or bundle.pages.search(item.question, k=FALLBACK_SOURCE_PAGES)


def _judge_one(
    llm: BaseLLMClient, system: str, item: QAItem, bundle: DocumentBundle, answer: VerifiedAnswer
) -> JudgeScores | None:
    reference = item.answer if item.answerable else NOT_IN_DOCUMENTS
    try:
        return judge_answer(llm, item.question, answer.answer, judge_sources(answer, item, bundle), reference)
    except LLMError as exc:
        logger.warning("judge failed", extra=log_fields(system=system, item=item.id, error=str(exc)[:300]))
        return None


def judge_systems(
    llm: BaseLLMClient,
    items: list[QAItem],
    bundles: dict[str, DocumentBundle],
    answers: dict[tuple[str, str], VerifiedAnswer],
    systems: tuple[str, ...] = SYSTEMS,
    workers: int = 4,
) -> JudgeReport:
    """The model judges every answer `evaluate` scored (keyed by (system, item id)); a failed
    judgement is counted, not averaged."""
    jobs = [(system, item) for system in systems for item in items]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        verdicts = list(pool.map(
            lambda job: _judge_one(llm, job[0], job[1], bundles[job[1].doc], answers[(job[0], job[1].id)]), jobs
        ))
    per_system: dict[str, JudgeMeans] = {}
    for system in systems:
        scored = [v for (name, _), v in zip(jobs, verdicts, strict=True) if name == system and v is not None]
        means = {
            criterion: round(statistics.fmean(getattr(v, criterion) for v in scored), 4) if scored else None
            for criterion in JUDGE_CRITERIA
        }
        per_system[system] = JudgeMeans(**means, judged=len(scored), failures=len(items) - len(scored))
    return JudgeReport(model=f"{llm.provider}:{llm.model}", systems=per_system)


def results_json(report: EvalReport, judge: JudgeReport | None = None) -> dict:
    """RESULTS.json: the metrics per system, the commit and the ranking model's hash; with a
    judge, `judge_<criterion>` means per system and a top-level `judge` block (model, answers
    judged, failures)."""
    from services.navigator.models import configured_models
    from treerag.evaluation.cv_report import git_commit

    data = report.results.model_dump()
    data["commit"] = git_commit()
    data["ranking_model"] = configured_models(get_settings()).ranking.digest()
    if judge is not None:
        for system, means in judge.systems.items():
            for criterion in JUDGE_CRITERIA:
                data["systems"][system][f"judge_{criterion}"] = getattr(means, criterion)
        data["judge"] = {
            "model": judge.model,
            "systems": {name: {"judged": m.judged, "failures": m.failures} for name, m in judge.systems.items()},
        }
    return data


def judge_table(judge: JudgeReport) -> str:
    def cell(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    rows = [
        f"| {name} | {cell(m.faithfulness)} | {cell(m.relevance)} | {cell(m.completeness)} | {m.judged} | {m.failures} |"
        for name, m in judge.systems.items()
    ]
    return (
        f"\n#### LLM judge ({judge.model})\n\n| system | faithfulness | relevance | completeness | judged | failed |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )


def write_report(report: EvalReport, out: Path, with_items: bool = False, judge: JudgeReport | None = None) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results_json(report, judge), indent=2) + "\n", encoding="utf-8")
    table = out.with_suffix(".md")
    table.write_text(markdown_table(report.results) + (judge_table(judge) if judge else ""), encoding="utf-8")
    if with_items:
        items = {name: [s.model_dump() for s in scores] for name, scores in report.items.items()}
        out.with_suffix(".items.json").write_text(json.dumps(items, indent=1) + "\n", encoding="utf-8")
    return table


def pool_names(folder: Path) -> list[str]:
    """The file names of every document under `folder` that the indexer reads."""
    if not folder.is_dir():
        raise MissingDocumentError(f"--pool {folder} is not a folder; pass the folder holding the documents")
    return sorted({p.name for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in POOL_SUFFIXES})


def run_folds(args: argparse.Namespace) -> int:
    """`--folds K` (or `--corpus`): held-out evaluation of every system over the pooled question
    sets; without folds, the shipped models answer every question."""
    from treerag.evaluation.crossval import CV_SYSTEMS, cross_validate
    from treerag.evaluation.cv_report import markdown, results_json
    from treerag.evaluation.fitting import RECIPES

    requested = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    systems = CV_SYSTEMS if requested == SYSTEMS else requested
    unknown = [s for s in systems if s not in CV_SYSTEMS]
    if unknown:
        print(f"error: unknown system(s) {', '.join(unknown)}; choose from {', '.join(CV_SYSTEMS)}", file=sys.stderr)
        return 2
    try:
        collections, bundles = asyncio.run(load_collections(args.dataset, args.pdfs, args.store))
        pool: list[str] = []
        if args.pool is not None:
            pool = pool_names(args.pool)
            bundles.update(asyncio.run(load_pool(pool, args.pool, args.store)))
        folds = 0 if not args.folds and args.split != "collection" else max(args.folds, 2)
        cv = cross_validate(
            collections, {n: b.index for n, b in bundles.items()}, {n: b.pages for n, b in bundles.items()},
            {n: b.chunks for n, b in bundles.items()}, folds, systems=systems, corpus=args.corpus,
            recipe=RECIPES[args.recipe], split=args.split, pool=pool,
            self_pairs=args.self_pairs,
        )
    except (DatasetError, MissingDocumentError, RerankerModelError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = results_json(cv, [d.stem for d in args.dataset], args.corpus)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    table = markdown(results)
    args.out.with_suffix(".md").write_text(table, encoding="utf-8")
    if args.items:
        items = [o.model_dump() for o in cv.outcomes]
        args.out.with_suffix(".items.json").write_text(json.dumps(items, indent=0) + "\n", encoding="utf-8")
    print(table)
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.pool is not None and not args.corpus:
        print("error: --pool needs --corpus (the pooled documents join the corpus-wide store)", file=sys.stderr)
        return 2
    if args.folds or args.corpus or args.split == "collection":
        return run_folds(args)
    if len(args.dataset) != 1:
        print("error: several --dataset files need --folds K (a pooled cross-validation)", file=sys.stderr)
        return 2
    args.dataset = args.dataset[0]
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        print(f"error: unknown system(s) {', '.join(unknown)}; choose from {', '.join(SYSTEMS)}", file=sys.stderr)
        return 2
    llm: BaseLLMClient | None = None
    if args.judge:
        try:
            llm = make_cli_llm(args, args.store)
        except LLMConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if llm is None:
            print(f"error: --judge needs a model: {HOW_TO_CONFIGURE}", file=sys.stderr)
            return 2
    try:
        items, bundles = asyncio.run(load_bundles(args.dataset, args.pdfs, args.store))
    except (DatasetError, MissingDocumentError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    answers: dict[tuple[str, str], VerifiedAnswer] = {}
    report = evaluate(args.dataset.stem, items, bundles, systems=systems, answers=answers)
    judge = None
    if llm is not None:
        judge = judge_systems(llm, items, bundles, answers, systems, workers=get_settings().llm_max_concurrency)
    table = write_report(report, args.out, args.items, judge)
    print(markdown_table(report.results) + (judge_table(judge) if judge else ""))
    if llm is not None:
        print(usage_line(llm))
    print(f"wrote {args.out} and {table}")
    return 0
