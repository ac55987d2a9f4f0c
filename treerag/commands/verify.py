"""`treerag verify --in FILE.jsonl --out OUT.jsonl`: check sentences against the pages they cite.

Each input line holds `sentence` and either `source` (the page text) or `doc` + `page` (read
from the store: doc id, id prefix or file name); `question` is optional and passed through.
Each output line is the input line plus `score` (0-1, higher = supported), `verdict`
(supported | contradicted | unsupported), `reason` and `window` (the evidence text and its
character offsets on the page).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.embeddings.words import word_vectors
from shared.adapters.nli import EntailmentModelError, configured_judge
from shared.app.verification import SourcePage, check_sentence
from shared.ports.model_roles import EntailmentJudge
from shared.settings import get_settings
from shared.text.substitution import WordVectors


class VerifyLine(BaseModel):
    """One sentence to check, against a given text or a stored page."""

    sentence: str = Field(min_length=1)
    source: str | None = None
    doc: str | None = None
    page: int | None = Field(default=None, ge=1)
    question: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> VerifyLine:
        if self.source is None and (self.doc is None or self.page is None):
            raise ValueError("give either `source` (the page text) or both `doc` and `page`")
        return self


class VerifyInputError(ValueError):
    """A line of the input cannot be checked; the message names the line and the fix."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("verify", help="Check sentences against the page text they cite.")
    parser.add_argument("--in", dest="input", type=Path, required=True, help="JSONL: sentence + source or doc + page.")
    parser.add_argument("--out", type=Path, required=True, help="JSONL written with score, verdict, reason, window.")
    parser.add_argument("--store", type=Path, default=get_settings().store_dir, help="Store folder for doc + page.")
    parser.add_argument("--nli", default=get_settings().nli,
                        help="Entailment model folder, or 'off' (default: TREERAG_NLI, else off).")
    parser.set_defaults(func=run)


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any], VerifyLine]]:
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                yield number, record, VerifyLine.model_validate(record)
            except (json.JSONDecodeError, ValidationError) as exc:
                raise VerifyInputError(f"{path}:{number}: {exc}") from exc


class _StoredPages:
    """Page texts read from the embedded store, each document resolved once."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.repo: EmbeddedRepository | None = None
        self.doc_ids: dict[str, str] = {}

    async def text(self, doc: str, page: int, where: str) -> SourcePage:
        if self.repo is None:
            self.repo = EmbeddedRepository(self.store)
        if doc not in self.doc_ids:
            record = await self.repo.find_document(doc)
            if record is None:
                raise VerifyInputError(f"{where}: no single document matches {doc!r} in {self.store}; "
                                       "give a doc id, id prefix or file name (`treerag tree` lists them)")
            self.doc_ids[doc] = record.doc_id
        doc_id = self.doc_ids[doc]
        text = await self.repo.get_page(doc_id, page)
        if text is None:
            raise VerifyInputError(f"{where}: document {doc_id} has no page {page}")
        return SourcePage(doc_id, page, text)

    async def close(self) -> None:
        if self.repo is not None:
            await self.repo.close()


async def verify_file(source: Path, out: Path, store: Path, judge: EntailmentJudge | None = None,
                      words: WordVectors | None = None) -> dict[str, int]:
    """Checks every line of `source` into `out`; returns the count of each verdict."""
    pages = _StoredPages(store)
    counts = {"supported": 0, "contradicted": 0, "unsupported": 0}
    try:
        with out.open("w", encoding="utf-8") as handle:
            for number, record, line in _lines(source):
                if line.source is not None:
                    page = SourcePage("", line.page or 0, line.source)
                else:
                    page = await pages.text(line.doc or "", line.page or 0, f"{source}:{number}")
                check = check_sentence(line.sentence, None, [page], judge, words)
                counts[check.verdict] += 1
                window = check.window.model_dump(exclude={"doc_id"} if not page.doc_id else set()) if check.window else None
                handle.write(json.dumps({**record, "score": check.score, "verdict": check.verdict,
                                         "reason": check.reason, "window": window}, ensure_ascii=False) + "\n")
    finally:
        await pages.close()
    return counts


def run(args: argparse.Namespace) -> int:
    try:
        counts = asyncio.run(verify_file(args.input, args.out, args.store, configured_judge(args.nli),
                                         word_vectors(get_settings())))
    except (VerifyInputError, EntailmentModelError, OSError) as exc:
        print(f"treerag verify: {exc}", file=sys.stderr)
        return 2
    print(", ".join(f"{n} {verdict}" for verdict, n in counts.items()) + f" -> {args.out}")
    return 0
