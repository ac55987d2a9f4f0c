"""The trees of the dev filings as a reader meets them: split words in headings, the tree's shape,
and summaries shared between sections.

    python -m bench.filing_trees [--store DIR]  ->  bench/results/filing_trees.json

The filings are those the FinanceBench dev questions ask about, indexed into `--store` as
`make eval` indexes them (indexed there when missing). Per filing, then pooled:

- `split_headings`: headings holding a word split by a space ("maintai n", "OVERVI EW"): two
  neighbouring letter runs whose join the filing prints whole at least twice, more often than
  one of the parts, where a part is one or two letters or never printed alone;
- the tree's shape: nodes, depth, top-level nodes, the largest fan-out, and the share of pages
  under the largest top-level node (one node holding nearly every page is no tree to read);
- `shared_summaries`: sections whose summary is word for word another section's of the same
  filing, and of them `shared_short_summaries`, shorter than a sentence ("None.", "Not
  applicable."), which is all such a section says;
- `contents_summaries`: sections whose summary holds a contents entry (dot leaders to a page
  number), which names other sections instead of saying what this one holds.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import configure_bench_logging, shared_data, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.tree import TreeNode, walk_tree
from shared.text.normalize import DOT_LEADER
from treerag.evaluation.dataset import load_dataset
from treerag.evaluation.runner import ensure_indexed

_RUN = re.compile(r"[A-Za-z]+| |[^A-Za-z ]+")
_WORD = re.compile(r"[A-Za-z]+")
# A join shorter than this is as likely two words ("a b") as one.
MIN_JOINED = 4
# Fewer words than this is no sentence: "None.", "Not applicable." (the summaries' own bound).
SENTENCE_WORDS = 4


def split_word(title: str, printed: Counter[str]) -> str | None:
    """The first word of `title` split by a space, as "left|right"; None when none is."""
    runs = _RUN.findall(title)
    for k in range(len(runs) - 2):
        left, gap, right = runs[k], runs[k + 1], runs[k + 2]
        if gap != " " or not (left.isalpha() and right.isalpha()):
            continue
        joined = (left + right).lower()
        whole = printed[joined]
        if len(joined) < MIN_JOINED or whole < 2:
            continue
        parts = (printed[left.lower()], printed[right.lower()])
        if min(parts) >= whole:
            continue
        if min(len(left), len(right)) <= 2 or min(parts) == 0:
            return f"{left}|{right}"
    return None


def _depth(node: TreeNode) -> int:
    return 1 + max((_depth(c) for c in node.children), default=0)


def measure(pages: list[str], roots: list[TreeNode]) -> dict[str, Any]:
    printed = Counter(w.lower() for page in pages for w in _WORD.findall(page))
    nodes = list(walk_tree(roots))
    splits = [(n.title[:100], found) for n in nodes if (found := split_word(n.title, printed))]
    summaries = Counter(n.summary.strip() for n in nodes if n.summary.strip())
    largest = max(roots, key=lambda n: n.page_end - n.page_start, default=None)
    return {
        "pages": len(pages), "nodes": len(nodes), "split_headings": len(splits), "examples": splits[:3],
        "depth": max((_depth(r) for r in roots), default=0), "top_level": len(roots),
        "largest_fan_out": max((len(n.children) for n in [*nodes]), default=0),
        "largest_top_level_page_share": round((largest.page_end - largest.page_start + 1) / max(1, len(pages)), 4)
        if largest else 0.0,
        "shared_summaries": sum(count for count in summaries.values() if count > 1),
        "shared_short_summaries": sum(count for text, count in summaries.items()
                                      if count > 1 and len(text.split()) < SENTENCE_WORDS),
        "contents_summaries": sum(bool(DOT_LEADER.search(n.summary)) for n in nodes),
    }


async def run(store: Path) -> dict[str, Any]:
    data = shared_data()
    filings = sorted({item.doc for item in load_dataset(data / "qa" / "financebench-dev.jsonl")})
    repository = EmbeddedRepository(store)
    try:
        bundles = await ensure_indexed(repository, filings, data / "pdfs")
        per_filing = {}
        for name in filings:
            index = bundles[name].index
            tree = await repository.get_tree(index.doc_id)
            per_filing[name] = measure(list(index.pages), tree.nodes if tree else [])
    finally:
        await repository.close()
    nodes = sum(f["nodes"] for f in per_filing.values())
    split = sum(f["split_headings"] for f in per_filing.values())
    return {
        "filings": len(per_filing), "headings": nodes, "split_headings": split,
        "split_heading_share": round(split / max(1, nodes), 4),
        "sections_with_a_shared_summary": sum(f["shared_summaries"] for f in per_filing.values()),
        "of_them_shorter_than_a_sentence": sum(f["shared_short_summaries"] for f in per_filing.values()),
        "sections_summarised_by_a_contents_entry": sum(f["contents_summaries"] for f in per_filing.values()),
        "median_depth": sorted(f["depth"] for f in per_filing.values())[len(per_filing) // 2],
        "filings_with_one_top_level_node_over_90pct_of_pages": sum(
            f["largest_top_level_page_share"] > 0.9 for f in per_filing.values()),
        "per_filing": per_filing,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"))
    args = parser.parse_args(argv)
    configure_bench_logging()
    write_result("filing_trees", asyncio.run(run(args.store)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
