"""RESULTS.json and RESULTS.md of a cross-validated run: per question set and pooled, per
question type, with paired bootstrap CIs against the BM25 baselines, the commit and the hashes
of the models fitted on each fold (and of the shipped model)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from services.navigator.models import configured_models
from shared.settings import get_settings
from treerag.evaluation.crossval import (
    BASELINES,
    CrossValidation,
    Outcome,
    paired_ci,
    summarise,
)

POOLED = "pooled"
# The system the product answers with: the per-type table says how far it is from BM25 over pages.
PRODUCT_SYSTEM = "treerag-auto"


def git_commit(folder: Path | None = None) -> str:
    """The checked-out commit (with `+dirty` when the code has uncommitted changes; results files
    under bench/results do not count)."""
    cwd = folder or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                                check=True).stdout.strip()
        # Results written by the run itself (make eval writes four) do not make the code dirty.
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/",
                                ":(exclude,top)bench/results"], cwd=cwd,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def _groups(outcomes: list[Outcome], key: str) -> dict[str, list[Outcome]]:
    groups: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault(getattr(outcome, key), []).append(outcome)
    return groups


def _table(outcomes: list[Outcome], systems: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for system in systems:
        row = summarise([o for o in outcomes if o.system == system]).model_dump()
        for baseline in BASELINES:
            if baseline in systems and baseline != system:
                ci = paired_ci(outcomes, system, baseline)
                row[f"hit_at_1_minus_{baseline}"] = None if ci is None else {"mean": ci[0], "low": ci[1], "high": ci[2]}
        out[system] = row
    return out


def results_json(cv: CrossValidation, datasets: list[str], corpus: bool) -> dict[str, Any]:
    systems = list(dict.fromkeys(o.system for o in cv.outcomes))
    by_set = _groups(cv.outcomes, "collection")
    questions = [o for o in cv.outcomes if not o.negative_pair]
    reranked = {"reranker": cv.reranker, "rerank_weights": cv.rerank_weights} if cv.reranker != "off" else {}
    return {
        "commit": git_commit(),
        "shipped_model": configured_models(get_settings()).ranking.digest(),
        "fold_models": cv.model_hashes,
        "fold_choices": cv.fold_choices,
        "embeddings": cv.embeddings,
        "folds": cv.folds,
        "split": cv.split,
        "pool": cv.pool,
        "self_pairs": cv.self_pairs,
        "corpus": corpus,
        "datasets": datasets,
        "fold_of_document": cv.fold_of_document,
        "sets": {name: _table(by_set[name], systems) for name in sorted(by_set)} | {POOLED: _table(cv.outcomes, systems)},
        "types": {kind: _table(group, systems) for kind, group in sorted(_groups(questions, "type").items())},
    } | reranked


def _cell(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _answer_cells(row: dict[str, Any]) -> str:
    """Figure questions, value stated, printed on a gold page, value stated of those, token F1
    of the others, right answer on the right page."""
    return (f"{row.get('figure_questions', 0)} | {_cell(row.get('value_in_answer'))} "
            f"| {row.get('printed_figures', 0)} | {_cell(row.get('value_in_answer_printed'))} "
            f"| {_cell(row.get('answer_f1'))} | {_cell(row.get('right_answer_right_page'))}")


def _ci(row: dict[str, Any], baseline: str) -> str:
    ci = row.get(f"hit_at_1_minus_{baseline}")
    return "" if not ci else f"{ci['mean']:+.3f} [{ci['low']:+.3f}, {ci['high']:+.3f}]"


def _heading(results: dict[str, Any]) -> str:
    """What the run held out and where it asked."""
    split = results.get("split", "document")
    if split == "shipped":
        what = "Shipped models, no refitting"
    elif split == "collection":
        what = "Held-out, leave-one-collection-out (fitted on the other sets)"
    else:
        what = f"Held-out ({results['folds']}-fold, split by {split})"
    if results["corpus"]:
        pool = results.get("pool", 0)
        what += ", corpus-wide" + (f", {pool} pooled documents on every shelf" if pool else "")
    return what


def markdown(results: dict[str, Any]) -> str:
    corpus = results["corpus"]
    lines = [f"{_heading(results)}; commit {results['commit'][:12]}, shipped model {results['shipped_model']}"
             f"{', embeddings ' + results['embeddings'] if 'embeddings' in results else ''}.", ""]
    if results.get("reranker"):
        lines += [f"Best pages reordered by {results['reranker']}; fitted weight per fold: "
                  f"{', '.join(f'{w:g}' for w in results['rerank_weights'])}.", ""]
    if results.get("fold_choices"):
        chosen = "; ".join(f"fold {k}: {c['ranker']}, budget {c['false_abstention_budget']}"
                           for k, c in enumerate(results["fold_choices"]))
        lines += [f"Fitted with nested selection ({chosen}).", ""]
    for name, table in results["sets"].items():
        n = next(iter(table.values()))["n"]
        lines += [
            f"### {name} (n={n} answerable)", "",
            "| system | hit@1 | Δ vs bm25-pages [95% CI] | Δ vs bm25-chunks [95% CI] | hit@3 | recall@5 "
            "| context recall | context tokens | false abst. | abst. unanswerable | abst. off-topic "
            + ("| routing acc. | doc recall@3 " if corpus else "| abst. missing name | abst. evidence removed ")
            + "| p50 ms |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for system, row in table.items():
            lines.append(
                f"| {system} | {_cell(row['hit_at_1'])} | {_ci(row, 'bm25-pages')} | {_ci(row, 'bm25-chunks')} "
                f"| {_cell(row['hit_at_3'])} | {_cell(row['recall_at_5'])} | {_cell(row['context_recall'])} "
                f"| {row['context_tokens']:.0f} | {_cell(row['false_abstention'])} "
                f"| {_cell(row['abstention_unanswerable'])} ({row['unanswerable']}) "
                f"| {_cell(row['abstention_off_topic'])} ({row['off_topic']}) "
                + (f"| {_cell(row['routing_accuracy'])} | {_cell(row.get('document_recall_at_3'))} " if corpus
                   else f"| {_cell(row.get('abstention_missing_name'))} ({row.get('missing_name', 0)}) "
                   f"| {_cell(row.get('abstention_evidence_removed'))} ({row.get('evidence_removed', 0)}) ")
                + f"| {row['latency_ms_p50']:.1f} |"
            )
        lines += ["", "Answers against the gold answer (figure questions: the value stated; the others: token F1):",
                  "", "| system | figure questions | value in answer | printed on a gold page | value in answer (printed) "
                  "| answer F1 (others) | right answer, right page |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {system} | {_answer_cells(row)} |" for system, row in table.items()]
        lines.append("")
    systems = list(next(iter(results["types"].values())).keys())
    compared = PRODUCT_SYSTEM if PRODUCT_SYSTEM in systems and "bm25-pages" in systems else None
    lines += ["### hit@1 per question type (all sets)", "", "| type | n | " + " | ".join(systems)
              + (f" | {compared} − bm25-pages [95% CI]" if compared else "") + " |"]
    lines.append("|---|---|" + "---|" * (len(systems) + bool(compared)))
    for kind, table in results["types"].items():
        n = next(iter(table.values()))["n"]
        if not n:
            continue  # a type with no answerable question (unanswerable items: see abstention)
        lines.append(f"| {kind} | {n} | " + " | ".join(_cell(table[s]["hit_at_1"]) for s in systems)
                     + (f" | {_ci(table[compared], 'bm25-pages')}" if compared else "") + " |")
    return "\n".join(lines) + "\n"


# The questions tables (docs/measurements.md): set labels as they print them, and the systems in their order.
README_SETS = (("r-manuals-dev", "R manuals"), ("mmlongbench-dev", "MMLongBench"),
               ("financebench-dev", "FinanceBench"), (POOLED, "pooled"))
README_SYSTEMS = (PRODUCT_SYSTEM, "bm25-pages", "bm25-chunks", "dense-pages")
SHARED_STORE_SET = "financebench-dev"


def readme_rows(collections: dict[str, Any], documents: dict[str, Any], corpus: dict[str, Any]) -> list[str]:
    """The rows of the "Questions" table (docs/measurements.md) from three results of `make eval`: each set
    held out whole (leave-one-collection-out), held out by document, and asked corpus-wide."""
    rows = []
    for key, label in README_SETS:
        for k, system in enumerate(README_SYSTEMS):
            row = collections["sets"][key][system]
            by_document, wide = documents["sets"][key][system], corpus["sets"][key][system]
            first = f"{label} ({row['n']})" if k == 0 else ""
            rows.append(
                f"| {first} | {system} | {_cell(row['hit_at_1'])} "
                f"| {_ci(row, 'bm25-pages')} | {_ci(row, 'bm25-chunks')} | {_cell(row['hit_at_3'])} "
                f"| {_cell(row['false_abstention'])} | {_cell(row['abstention_unanswerable'])} "
                f"| {_cell(row['abstention_off_topic'])} | {_cell(row.get('abstention_missing_name'))} "
                f"| {_cell(by_document['hit_at_1'])} | {_cell(by_document['false_abstention'])} "
                f"| {_cell(wide['hit_at_1'])} | {_cell(wide['routing_accuracy'])} |"
            )
    return rows


def answer_rows(collections: dict[str, Any]) -> list[str]:
    """The rows of the answers table (docs/measurements.md): the product's answers against the gold answer,
    each set held out whole."""
    rows = []
    for key, label in README_SETS:
        row = collections["sets"][key][PRODUCT_SYSTEM]
        rows.append(f"| {label} ({row['n']}) | {_answer_cells(row)} |")
    return rows


HEADLINE_HEADER = ("| questions, held out | hit@1 | BM25 over pages | Δ [95% CI] | false refusals "
                   "| off-topic refused | right answer, right page |")


def headline_rows(collections: dict[str, Any], store: dict[str, Any]) -> list[str]:
    """The README's one table of figures: the product against BM25 over pages on each set held
    out whole, then the shared store, each from the results of `make eval`."""
    rows = [HEADLINE_HEADER, "|---|---:|---:|---|---:|---:|---:|"]
    for key, label in README_SETS:
        row, bm25 = collections["sets"][key][PRODUCT_SYSTEM], collections["sets"][key]["bm25-pages"]
        rows.append(f"| {label} ({row['n']}), by collection | {_cell(row['hit_at_1'])} | {_cell(bm25['hit_at_1'])} "
                    f"| {_ci(row, 'bm25-pages')} | {_cell(row['false_abstention'])} "
                    f"| {_cell(row['abstention_off_topic'])} | {_cell(row.get('right_answer_right_page'))} |")
    table = store["sets"][SHARED_STORE_SET]
    row, bm25 = table[PRODUCT_SYSTEM], table["bm25-pages"]
    rows.append(f"| shared store of {store['pool']} filings ({row['n']}), by company | {_cell(row['hit_at_1'])} "
                f"| {_cell(bm25['hit_at_1'])} | {_ci(row, 'bm25-pages')} | {_cell(row['false_abstention'])} "
                f"| n/a | {_cell(row.get('right_answer_right_page'))} |")
    return rows


def shared_store_rows(store: dict[str, Any]) -> list[str]:
    """The rows of the shared-store table (docs/measurements.md): the FinanceBench questions asked of every
    filing of the store at once, cross-validated by company."""
    table = store["sets"][SHARED_STORE_SET]
    return [
        f"| {system} | {_cell(row['routing_accuracy'])} | {_cell(row.get('document_recall_at_3'))} "
        f"| {_cell(row['hit_at_1'])} | {_ci(row, 'bm25-pages')} | {_cell(row['hit_at_3'])} "
        f"| {_cell(row['false_abstention'])} | {row['latency_ms_p50']:.1f} |"
        for system, row in table.items()
    ]
