"""Routing in a store of about 1,000 filings: does the right filing still come first when most
of the store are filings of other companies that hold the same numbers?

    python -m bench.distractor_store [--store DIR] [--copies 6] [--questions FILE]

The store `bench.shared_store_latency` indexes (every FinanceBench filing) is the base. Each
filing gets `--copies` distractors: the same filing issued by a company that does not exist.
Its issuer's names (the card's issuer, that name without its legal form, and the company part
of the file name) are replaced in its pages, its tree's titles and summaries, its card and its
file name by a made-up name; its vectors and page analysis are computed again from the renamed
text, as indexing would. A distractor thus holds the same statements, figures and years as the
filing it copies: only the company tells them apart, as in a store that holds every filing of a
sector. What the renaming misses (a brand, a ticker, a subsidiary) stays, as another company's
filing may mention them too.

The FinanceBench dev questions are then asked with no document named, through the harness's
query path with the shipped models, of the base store and of the store with its distractors:
routing (the first ranked page is in the question's filing), the question's filing among the
first three documents, hit@1 and hit@3 (a gold page), how often a copy of the question's filing
comes first, and query latency. The shipped router was fitted on these questions, so the base
figure is in-sample (`make eval` gives the held-out one); the benchmark measures what the
distractors take away. Results go to bench/results/distractor_store.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, latency_summary, shared_data, write_result
from bench.conversations import wilson
from bench.shared_store_latency import STORE_FOLDERS, ensure_store
from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings.document import embed_document
from shared.adapters.embeddings.factory import make_embedder
from shared.model.documents import DocumentRecord, IndexedDocument
from shared.model.query import QuerySettings
from shared.model.tree import walk_tree
from shared.settings import get_settings
from shared.text.page_analysis import analyse_pages
from treerag.engine import QueryEngine
from treerag.evaluation.asking import Asker
from treerag.query_path import QueryModels

# The legal forms an issuer's name ends with: the name a question uses is what comes before.
_LEGAL_FORM = re.compile(
    r"[,\s]+(inc\.?|incorporated|corporation|corp\.?|company|co\.?|plc|ltd\.?|limited|holdings?|group|international"
    r"|n\.?v\.?|s\.?a\.?)$",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^the\s+", re.IGNORECASE)
_SYLLABLES = ("vel", "mar", "dor", "quin", "tal", "bren", "sor", "cal", "vin", "ket", "lum", "ras", "nov", "ter",
              "zan", "pel", "gor", "fen", "hal", "tri")


def made_up_names(count: int, seed: int = 0) -> list[str]:
    """`count` distinct company names of three syllables that are no real word."""
    rng = random.Random(seed)
    names: dict[str, None] = {}
    while len(names) < count:
        names["".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()] = None
    return list(names)


def company_of(file_name: str) -> str:
    """The company part of a filing's file name ("3M" of "3M_2018_10K.pdf")."""
    return re.split(r"_\d{4}", Path(file_name).stem)[0]


def issuer_names(records: Sequence[DocumentRecord]) -> list[str]:
    """The names the issuer of these filings (one company's) goes by in their text, as printed
    and in capitals and title case, longest first."""
    names: set[str] = set()
    for record in records:
        if record.card and record.card.issuer.strip():
            name = record.card.issuer.strip()
            names.add(name)
            core = name
            while (shorter := _LEGAL_FORM.sub("", _ARTICLE.sub("", core))) != core:
                core = shorter
            names.add(core.strip(" ,"))
        names.add(company_of(record.file_name))
    variants = {form for name in names for form in (name, name.upper(), name.title())}
    return sorted((n for n in variants if len(n) >= 2), key=len, reverse=True)


def renamer(names: Sequence[str]) -> re.Pattern[str]:
    """Case-sensitive: a name that is also a word ("Block") is not replaced where it is the word."""
    return re.compile(r"(?<![\w&])(" + "|".join(re.escape(n) for n in names) + r")(?![\w&])")


def distractor(indexed: IndexedDocument, names: Sequence[str], new_name: str, doc_id: str) -> IndexedDocument:
    """`indexed` as if `new_name` had issued it (its issuer's `names` replaced), under `doc_id`."""
    pattern = renamer(names)

    def swap(text: str) -> str:
        return pattern.sub(lambda m: new_name.upper() if m.group(0).isupper() else new_name, text)

    pages = [swap(page) for page in indexed.pages]
    tree = indexed.tree.model_copy(deep=True, update={"doc_id": doc_id})
    for node in walk_tree(tree.nodes):
        node.title = swap(node.title)
        node.summary = swap(node.summary)
    record = indexed.record
    stem = Path(record.file_name).stem
    file_name = new_name.upper() + stem[len(company_of(record.file_name)):] + Path(record.file_name).suffix
    card = record.card.model_copy(update={"title": swap(record.card.title), "issuer": swap(record.card.issuer),
                                          "subject": swap(record.card.subject)}) if record.card else None
    renamed = record.model_copy(update={"doc_id": doc_id, "file_name": file_name, "title": swap(record.title),
                                        "card": card})
    analysis = analyse_pages(pages, [(n.title, n.summary) for n in walk_tree(tree.nodes)])
    return IndexedDocument(record=renamed, pages=pages, tree=tree, embeddings=None, analysis=analysis.to_bytes())


async def build(base: Path, store: Path, copies: int) -> dict[str, str]:
    """`store`: the base store's files and `copies` distractors of each filing; the doc id of the
    filing each distractor copies."""
    if store.exists():
        shutil.rmtree(store)
    for folder in STORE_FOLDERS:
        (store / folder).mkdir(parents=True)
        for path in (base / folder).glob("*"):
            os.link(path, store / folder / path.name)
    source = EmbeddedRepository(base)
    target = EmbeddedRepository(store)
    embedder = make_embedder()
    records = await source.list_documents()
    companies: dict[str, list[DocumentRecord]] = {}
    for record in records:
        companies.setdefault(company_of(record.file_name).upper(), []).append(record)
    # Copy k of every filing of one company is issued by the same made-up company.
    made_up = made_up_names(len(companies) * copies)
    copied: dict[str, str] = {}
    for c, filings in enumerate(companies[name] for name in sorted(companies)):
        names = issuer_names(filings)
        for record in filings:
            tree = await source.get_tree(record.doc_id)
            if tree is None:
                continue
            indexed = IndexedDocument(record=record, pages=await source.get_pages(record.doc_id), tree=tree)
            for k in range(copies):
                doc_id = f"{record.doc_id[:10]}d{k:02d}"
                clone = distractor(indexed, names, made_up[c * copies + k], doc_id)
                if embedder is not None:
                    clone.embeddings = embed_document(doc_id, clone.pages, clone.tree.nodes, embedder)
                await target.put_indexed(clone)
                copied[doc_id] = record.doc_id
    return copied


def ask_all(store: Path, items: list[dict[str, Any]], copied: dict[str, str]) -> dict[str, Any]:
    repository = EmbeddedRepository(store)
    asker = Asker(QueryModels.configured(get_settings()))
    started = time.perf_counter()
    # Its indexes are asked outside the loop that read them: every page text is read with them.
    engine = QueryEngine(repository, embedder=make_embedder(), pages_on_use=False)
    records = asyncio.run(repository.list_documents())
    by_name = {r.file_name: r.doc_id for r in records}
    indexes = asyncio.run(engine.indexes([r.doc_id for r in records]))
    load_s = time.perf_counter() - started
    rows = []
    for item in items:
        gold_doc = by_name[item["doc"]]
        t0 = time.perf_counter()
        run = asker.ask(item["question"], indexes, QuerySettings())
        seconds = time.perf_counter() - t0
        passages = run.navigation.passages if run.navigation else []
        ranked = list(dict.fromkeys((p.doc_id, page) for p in passages for page in p.pages))
        documents = list(dict.fromkeys(doc for doc, _ in ranked))
        gold = {(gold_doc, p) for p in item.get("evidence_pages", [])}
        rows.append({
            "id": item["id"], "seconds": seconds,
            "routed": bool(ranked) and ranked[0][0] == gold_doc,
            "in_first_three": gold_doc in documents[:3],
            "hit_at_1": bool(ranked) and ranked[0] in gold,
            "hit_at_3": any(p in gold for p in ranked[:3]),
            "copy_first": bool(ranked) and copied.get(ranked[0][0]) == gold_doc,
        })
    asker.close()

    def share(key: str) -> dict[str, float]:
        hits = sum(r[key] for r in rows)
        return {"value": round(hits / len(rows), 3), "ci": wilson(hits, len(rows))}

    return {"documents": len(records), "pages": sum(r.page_count for r in records), "load_s": round(load_s, 1),
            "routing": share("routed"), "document_recall_at_3": share("in_first_three"), "hit_at_1": share("hit_at_1"),
            "hit_at_3": share("hit_at_3"), "copy_of_the_filing_first": share("copy_first"),
            "query": latency_summary([r["seconds"] for r in rows]), "per_question": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-shared-store"))
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--work", type=Path, default=Path("/tmp/treerag-distractor-store"))
    args = parser.parse_args(argv)
    configure_bench_logging()
    data = shared_data()
    # Every page of the larger store in memory at once: the index cache's bound is lifted.
    os.environ.setdefault("TREERAG_NAVIGATOR_INDEX_CACHE_PAGES", "1000000")
    ensure_store(args.store, data)
    items = [json.loads(line) for line in (data / "qa" / "financebench-dev.jsonl").read_text().splitlines()
             if line.strip()]
    items = [i for i in items if i.get("evidence_pages")]
    copied = asyncio.run(build(args.store, args.work, args.copies))
    base = ask_all(args.store, items, {})
    grown = ask_all(args.work, items, copied)
    paired = [(a["routed"], b["routed"]) for a, b in zip(base["per_question"], grown["per_question"], strict=True)]
    result = {"copies_per_filing": args.copies, "questions": len(items), "base": base, "with_distractors": grown,
              "routed_in_base_lost_with_distractors": sum(a and not b for a, b in paired),
              "routed_only_with_distractors": sum(b and not a for a, b in paired)}
    write_result("distractor_store", result)
    for name in ("base", "with_distractors"):
        run = result[name]
        print(f"{name}: {run['documents']} filings, {run['pages']:,} pages: routing {run['routing']['value']} "
              f"{run['routing']['ci']}, recall@3 {run['document_recall_at_3']['value']}, hit@1 {run['hit_at_1']['value']}, "
              f"hit@3 {run['hit_at_3']['value']}, copy first {run['copy_of_the_filing_first']['value']}, "
              f"p50 {run['query']['p50_ms']} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
