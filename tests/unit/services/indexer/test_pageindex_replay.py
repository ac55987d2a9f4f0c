"""Replaying the trees PageIndex built with GPT-4o as the model's replies, on the same real PDFs:
the builder must locate the titles in the page text and correct the pages GPT-4o got wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.indexer.extract import extract_content, open_document
from services.indexer.llm_tree import TreeOptions, build_llm_tree
from shared.model.tree import walk_tree
from shared.text.normalize import compact
from tests.support.llm.clients import make_client
from tests.support.llm.fake_provider import FakeProvider
from tests.support.llm.scripted_model import ScriptedHeading, ScriptedModel

DATA = Path(__file__).resolve().parents[4].parent / "shared" / "data" / "pdfs" / "pageindex"
PDFS = sorted(DATA.glob("*.pdf")) if DATA.is_dir() else []

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(not PDFS, reason=f"{DATA} is absent (read-only shared data)"),
]


def _headings(structure_file: Path) -> list[ScriptedHeading]:
    out: list[ScriptedHeading] = []

    def walk(nodes: list[dict], level: int) -> None:
        for node in nodes:
            out.append(ScriptedHeading(level, node["title"], node["start_index"]))
            walk(node.get("nodes", []), level + 1)

    walk(json.loads(structure_file.read_text())["structure"], 1)
    return out


@pytest.mark.parametrize("pdf", PDFS, ids=lambda p: p.name)
def test_gpt4o_page_numbers_are_checked_against_the_text(pdf: Path, provider: FakeProvider) -> None:
    headings = _headings(pdf.with_name(f"{pdf.stem}_structure.json"))
    pages = extract_content(open_document(pdf.read_bytes(), 10_000), with_layout=False).pages
    provider.responder = ScriptedModel(headings)
    nodes = build_llm_tree(pages, make_client("gemini", provider), "general", options=TreeOptions(summaries=False))
    flat = list(walk_tree(nodes))
    verified = [n for n in flat if n.verified]
    assert len(verified) >= 0.9 * len(flat)
    claimed = {(" ".join(h.title.split()), h.page) for h in headings}
    for node in verified:
        # A verified node's page prints its title (numbering and spacing aside), whether the
        # model's page was kept or corrected.
        title = compact(node.title)
        page = compact(pages[node.page_start - 1])
        assert title[-12:] in page or compact(" ".join(node.title.split()[-5:])) in page, node.title
    moved = [n for n in flat if (n.title, n.page_start) not in claimed and n.page_start != 1]
    assert all(n.verified for n in moved)
