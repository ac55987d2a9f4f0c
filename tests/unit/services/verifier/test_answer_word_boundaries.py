"""No answer sentence, and no highlight the web app draws for it, starts or ends inside a word.

A reader who sees "…ncome before taxes" or a highlight that stops at "reven" cannot trust the
citation. Over the sample documents the demo indexes, every question the demo asks and one question
per tree heading are answered through the query engine, and every sentence's evidence window is
checked against the page text it points into.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from services.indexer.pipeline import IndexOptions, index_pdf
from shared.adapters.embedded.store import EmbeddedRepository
from shared.model.query import QuerySettings, VerifiedAnswer
from treerag.demo import QUESTIONS
from treerag.engine import QueryEngine
from treerag.samples import write_samples

_CITATION_MARK = re.compile(r"\s*\[[^\]]*\]\s*$")


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _inside_word(page: str, at: int) -> bool:
    """True when offset `at` falls between two letters or digits of one word."""
    return 0 < at < len(page) and page[at - 1].isalnum() and page[at].isalnum()


async def _answers(tmp: Path) -> tuple[list[VerifiedAnswer], dict[str, list[str]]]:
    repository = EmbeddedRepository(tmp / "store")
    pages: dict[str, list[str]] = {}
    headings: list[str] = []
    for pdf in write_samples(tmp / "samples"):
        indexed = index_pdf(pdf.read_bytes(), pdf.name, IndexOptions())
        await repository.put_indexed(indexed)
        pages[indexed.record.doc_id] = indexed.pages
        headings += [node.title for node in indexed.tree.nodes if node.title.strip()]
    questions = list(QUESTIONS) + [f"What does the documentation say about {title.lower()}?" for title in headings]
    engine = QueryEngine(repository)
    answers = [(await engine.ask(question, None, QuerySettings())).answer for question in questions]
    return answers, pages


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[VerifiedAnswer], dict[str, list[str]]]:
    return asyncio.run(_answers(tmp_path_factory.mktemp("word-boundaries")))


def test_every_evidence_window_is_the_page_text_it_names_and_starts_and_ends_on_a_word_boundary(
    answered: tuple[list[VerifiedAnswer], dict[str, list[str]]],
) -> None:
    answers, pages = answered
    windows = [s.window for a in answers for s in a.sentences if s.window is not None]
    assert len(windows) >= 20, "the sample questions should yield a few dozen cited sentences to check"
    for window in windows:
        page = pages[window.doc_id][window.page - 1]
        assert _squeeze(page[window.start:window.end]) == _squeeze(window.text)
        assert not _inside_word(page, window.start), f"starts inside a word: {page[window.start - 10:window.end]!r}"
        assert not _inside_word(page, window.end), f"ends inside a word: {page[window.start:window.end + 10]!r}"


def test_every_answer_sentence_begins_and_ends_with_a_whole_word_of_its_page(
    answered: tuple[list[VerifiedAnswer], dict[str, list[str]]],
) -> None:
    answers, pages = answered
    checked = 0
    for sentence in (s for a in answers for s in a.sentences if s.window is not None):
        window = sentence.window
        assert window is not None
        page = _squeeze(pages[window.doc_id][window.page - 1])
        words = re.findall(r"\w+", _CITATION_MARK.sub("", sentence.text))
        if not words:
            continue
        for word in (words[0], words[-1]):
            assert re.search(rf"(?<!\w){re.escape(word)}(?!\w)", page), f"{word!r} is not a whole word of its page"
        checked += 1
    assert checked >= 20
