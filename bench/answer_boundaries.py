"""Whether any answer of an evaluation run starts or ends a quoted statement inside a word.

    python -m bench.answer_boundaries [--items FILE] [--store DIR] [--check]

Reads the per-question answers `treerag eval --items` wrote (`make eval`'s leave-one-collection-
out run by default) and the pages of the store it ran on. Each cited statement of an answer (the
text before each `[file, p. N]` marker, without the ellipses that mark a cut) must begin and end
with a whole word of a page it cites: "…ncome before taxes" or "the reven" fails. A figure
answer ("$1,577 million for 2018 — Purchases of property, plant and equipment, Consolidated
Statement of Cash Flows") leads with a reading of the cell, scaled and rounded, not a quote: its
row label and statement title are checked, each word as the page prints it in any case (a
title printed in capitals reads in title case). Counted per system; with `--check`, any failure
in an answer of the product's own systems (`treerag-*`: what a user is given) makes the command
fail, while the baselines' answers (the same answerer over another retriever's passages) are
counted and shown. Results go to bench/results/answer_boundaries.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from shared.text.citations import CITATION, parse_citations
from shared.text.normalize import fold
from shared.text.tables import FIGURE_SEPARATOR

_WORD = re.compile(r"\w+")
_EXAMPLES = 20
# The systems whose answers the product gives (the others are the evaluation's baselines).
PRODUCT = "treerag"


def statements(answer: str) -> list[tuple[str, str, tuple[int, ...]]]:
    """(statement, cited file, cited pages) of each cited statement of `answer`."""
    found = []
    start = 0
    for citation in parse_citations(answer):
        text = answer[start:citation.start].strip(" …")
        start = citation.end
        if _WORD.search(text):
            found.append((text, citation.document, citation.pages))
    return found


def whole_word(word: str, page: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", page) is not None


async def page_texts(store: Path) -> dict[str, list[str]]:
    """Every document's pages, by file name."""
    repository = EmbeddedRepository(store)
    pages: dict[str, list[str]] = {}
    for record in await repository.list_documents():
        pages.setdefault(record.file_name, await repository.get_pages(record.doc_id))
    return pages


def check(items: list[dict[str, Any]], pages: dict[str, list[str]]) -> dict[str, Any]:
    checked = 0
    failures: list[dict[str, Any]] = []
    unknown = 0
    by_system: dict[str, dict[str, int]] = {}
    for item in items:
        if item.get("abstained") or not item.get("answer"):
            continue
        for text, document, cited in statements(item["answer"]):
            own = pages.get(document)
            # Read as the answerer read them: ligatures, quotes and dashes folded.
            texts = [fold(own[p - 1]) for p in cited if own and 1 <= p <= len(own)]
            if not texts:
                unknown += 1
                continue
            quoted = CITATION.sub("", text)
            if FIGURE_SEPARATOR in quoted:
                quoted = quoted.split(FIGURE_SEPARATOR, 1)[1].lower()
                texts = [page.lower() for page in texts]
            words = _WORD.findall(fold(quoted))
            if not words:
                continue
            checked += 1
            counts = by_system.setdefault(item["system"], {"statements": 0, "inside_a_word": 0})
            counts["statements"] += 1
            for edge, word in (("start", words[0]), ("end", words[-1])):
                if not any(whole_word(word, page) for page in texts):
                    counts["inside_a_word"] += 1
                    failures.append({"system": item["system"], "item": item["item_id"], "edge": edge,
                                     "word": word, "statement": text[:200]})
    product = [f for f in failures if f["system"].startswith(PRODUCT)]
    return {"statements_checked": checked, "edges_inside_a_word": len(failures),
            "product_edges_inside_a_word": len(product), "by_system": by_system,
            "statements_citing_no_stored_page": unknown,
            "examples": (product + [f for f in failures if f not in product])[:_EXAMPLES]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=Path, default=Path("bench/results/cv_collections.items.json"))
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    parser.add_argument("--check", action="store_true",
                        help="fail when any statement of the product's answers starts or ends inside a word")
    args = parser.parse_args(argv)
    configure_bench_logging()
    items = json.loads(args.items.read_text(encoding="utf-8"))
    result = check(items, asyncio.run(page_texts(args.store)))
    result["items"] = len(items)
    write_result("answer_boundaries", result)
    print(f"{result['statements_checked']} cited statements of {len(items)} answers checked: "
          f"{result['edges_inside_a_word']} starts or ends inside a word, {result['product_edges_inside_a_word']} "
          f"of them in the product's answers")
    if args.check and result["product_edges_inside_a_word"]:
        for failure in [f for f in result["examples"] if f["system"].startswith(PRODUCT)]:
            print(f"  {failure['item']} ({failure['system']}): {failure['edge']} {failure['word']!r} in "
                  f"{failure['statement']!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
