"""Follow-up questions against the questions written out in full:

    python -m bench.conversations [--data DIR] [--store DIR] [--out FILE]

A conversation set of our own, in two parts. Written conversations over the R manuals
(bench/sets/conversations.jsonl): each ends in a follow-up standing for a dev question, asked
by ellipsis or with a pronoun. Made conversations over the FinanceBench dev questions that name
one period and their company: each question is the last turn of two- and three-turn
conversations that reach it by ellipsis. The turn before it asks the same about the year before ("What is the FY2017
capital expenditure…", then "And in FY2018?"), or about another company of the set ("… for
PepsiCo?", then "What about 3M?"), or both (three turns). The follow-up phrasings rotate.

Each last turn is completed from the turns before it, as the chats complete it
(shared/app/chats.py), and both it and the question written out in full are answered through
the one query path (`QueryEngine`, as `treerag ask`) over the question's own filing. Reported:
how often the completed follow-up's top cited page is the full question's (the target is
≥ 90 %), how often each cites a gold page first, with 95 % Wilson intervals. Results go to
bench/results/conversations.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import RESULTS, configure_bench_logging, shared_data, write_result
from shared.adapters.embedded.store import EmbeddedRepository
from shared.app.chats import follow
from shared.model.query import QuerySettings
from shared.text.periods import period_spans
from treerag.engine import QueryEngine

logger = logging.getLogger("bench.conversations")

PERIOD_FOLLOW_UPS = ("And in {}?", "What about {}?", "How about in {}?")
NAME_FOLLOW_UPS = ("What about {}?", "And for {}?", "Same for {}?")
WILSON_Z = 1.96


@dataclass(frozen=True)
class Conversation:
    kind: str
    doc: str
    turns: list[str]
    standalone: str
    gold_pages: list[int]


def _year_before(question: str, span: tuple[int, int]) -> str | None:
    text = question[span[0]:span[1]]
    years = [int(w) for w in re.findall(r"(?:19|20)\d\d", text)]
    if len(years) != 1:
        return None
    return question[:span[0]] + text.replace(str(years[0]), str(years[0] - 1)) + question[span[1]:]


def conversations(items: list[dict[str, Any]]) -> list[Conversation]:
    """The set: every answerable question naming one period and its company, reached three ways."""
    companies = sorted({item["company"] for item in items if item.get("company")})
    made: list[Conversation] = []
    for n, item in enumerate(items):
        question, company = item["question"], item.get("company") or ""
        spans = period_spans(question)
        if not item.get("evidence_pages") or len(spans) != 1 or company not in question:
            continue
        before = _year_before(question, spans[0])
        if before is None:
            continue
        period = question[spans[0][0]:spans[0][1]]
        other = companies[(companies.index(company) + 1) % len(companies)]
        by_other = question.replace(company, other)
        by_other_before = before.replace(company, other)
        gold = item["evidence_pages"]
        made.append(Conversation("period", item["doc"], [before, PERIOD_FOLLOW_UPS[n % 3].format(period)],
                                 question, gold))
        made.append(Conversation("name", item["doc"], [by_other, NAME_FOLLOW_UPS[n % 3].format(company)],
                                 question, gold))
        made.append(Conversation("name+period", item["doc"], [by_other_before, NAME_FOLLOW_UPS[(n + 1) % 3]
                                 .format(company), PERIOD_FOLLOW_UPS[(n + 1) % 3].format(period)], question, gold))
    return made


WRITTEN = Path(__file__).resolve().parent / "sets" / "conversations.jsonl"


def written(items: dict[str, dict[str, Any]]) -> list[Conversation]:
    """The written conversations, each ending in a follow-up for the dev question it names."""
    made = []
    for line in WRITTEN.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            item = items[entry["question_id"]]
            made.append(Conversation("written", item["doc"], entry["turns"], item["question"], item["evidence_pages"]))
    return made


def completed(turns: list[str]) -> str:
    previous: str | None = None
    for turn in turns:
        previous = follow(turn, previous, [], []).rewrite.question
    assert previous is not None
    return previous


def wilson(hits: int, n: int) -> list[float]:
    if n == 0:
        return [float("nan"), float("nan")]
    p, z2 = hits / n, WILSON_Z ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = WILSON_Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(centre - half, 3), round(centre + half, 3)]


async def top_page(engine: QueryEngine, question: str, doc: str) -> int | None:
    result = await engine.ask(question, [doc], QuerySettings(), use_cache=False)
    citations = result.answer.citations
    return citations[0].pages[0] if citations and not result.answer.abstained else None


async def measure(store: Path, convs: list[Conversation]) -> dict[str, Any]:
    repository = EmbeddedRepository(store)
    engine = QueryEngine(repository)
    rows = []
    for conv in convs:
        asked = completed(conv.turns)
        full, followed = await top_page(engine, conv.standalone, conv.doc), await top_page(engine, asked, conv.doc)
        rows.append({"kind": conv.kind, "doc": conv.doc, "turns": conv.turns, "completed": asked,
                     "standalone": conv.standalone, "same_text": asked == conv.standalone,
                     "standalone_page": full, "completed_page": followed,
                     "same_page": full == followed, "standalone_gold": full in conv.gold_pages,
                     "completed_gold": followed in conv.gold_pages})
    await repository.close()
    return summary(rows)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def rate(key: str, subset: list[dict[str, Any]]) -> dict[str, Any]:
        hits = sum(bool(r[key]) for r in subset)
        return {"rate": round(hits / len(subset), 3) if subset else None, "ci95": wilson(hits, len(subset)),
                "n": len(subset)}

    kinds = sorted({r["kind"] for r in rows})
    return {
        "conversations": len(rows),
        "two_turn": sum(len(r["turns"]) == 2 for r in rows), "three_turn": sum(len(r["turns"]) == 3 for r in rows),
        "same_page": rate("same_page", rows), "same_text": rate("same_text", rows),
        "standalone_gold_first": rate("standalone_gold", rows), "completed_gold_first": rate("completed_gold", rows),
        "by_kind": {k: {"same_page": rate("same_page", [r for r in rows if r["kind"] == k])} for k in kinds},
        "differing": [r for r in rows if not r["same_page"]],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="../shared/data by default")
    parser.add_argument("--store", type=Path, default=Path("/tmp/treerag-eval-store"),
                        help="an embedded store holding the dev filings (make eval fills it)")
    parser.add_argument("--out", type=Path, default=RESULTS / "conversations.json")
    args = parser.parse_args(argv)
    configure_bench_logging()
    data = args.data or shared_data()

    def read(name: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (data / "qa" / name).read_text().splitlines() if line.strip()]

    convs = written({item["id"]: item for item in read("r-manuals-dev.jsonl")}) + conversations(
        read("financebench-dev.jsonl"))
    result = asyncio.run(measure(args.store, convs))
    write_result(args.out.stem, result)
    print(json.dumps({k: v for k, v in result.items() if k != "differing"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
