"""A model's answer checked while it is written: each sentence told with its verdict as soon as
the model has begun the next, the answer so far told as it grows, and the verified answer the
same as when nothing streams."""

from __future__ import annotations

import re
from collections.abc import Callable

from services.verifier.answer import answer_question
from services.verifier.detector import ABSTENTION
from shared.model.query import Passage, QuerySettings, SentenceCheck, SourceNote
from tests.unit.services.verifier.test_verifier import context, page_text

ANSWER = ("Each safety valve opens at a pressure of 12 bar [plant.pdf, p. 4]. "
          "The shift supervisor tests every safety valve once per quarter [plant.pdf, p. 5]. "
          "The valves are painted red [plant.pdf, p. 4].")


class _Writer:
    """Writes `text` a word at a time, noting what had been told when each word was written."""

    name = "llm:writer"

    def __init__(self, text: str, restart_after: int | None = None) -> None:
        self.text = text
        self.restart_after = restart_after
        self.events: list[tuple[str, object]] = []
        self.shown: list[str] = []  # each sentence as told, as the answer's text shows it

    def generate(self, question: str, passages: list[Passage], notes: list[SourceNote] | None = None,
                 on_text: Callable[[str], None] | None = None) -> str:
        words = re.findall(r"\S+\s*", self.text)
        if on_text is not None and self.restart_after is not None:
            for n in range(1, self.restart_after + 1):  # a call cut off, then asked again
                on_text("".join(words[:n]).strip())
        for n in range(1, len(words) + 1):
            draft = "".join(words[:n]).strip()
            self.events.append(("written", draft))
            if on_text is not None:
                on_text(draft)
        return self.text


def _streamed(writer: _Writer, question: str = "safety valve facts"):  # type: ignore[no-untyped-def]
    told: list[tuple[int, SentenceCheck]] = []
    drafts: list[str] = []

    def sentence(index: int, check: SentenceCheck, shown: str) -> None:
        told.append((index, check))
        writer.shown.append(shown)
        writer.events.append(("sentence", index))

    answer = answer_question(context(question), QuerySettings(), "dfs", writer, page_text,
                             on_sentence=sentence, on_draft=drafts.append)
    return answer, told, drafts


def test_each_sentence_is_checked_as_soon_as_the_model_has_begun_the_next() -> None:
    writer = _Writer(ANSWER)
    answer, told, drafts = _streamed(writer)
    assert [i for i, _ in told] == [0, 1, 2]
    assert [c for _, c in told] == answer.sentences
    # Each sentence is told as the answer's text shows it: the lines joined are that text.
    assert " ".join(writer.shown) == answer.answer
    # The first verdict is heard while the model is still writing the second sentence.
    first = writer.events.index(("sentence", 0))
    written_before = [text for kind, text in writer.events[:first] if kind == "written"]
    assert written_before[-1].endswith("The") and "quarter" not in written_before[-1]
    assert writer.events.index(("sentence", 1)) < writer.events.index(("written", ANSWER.strip()))
    assert drafts[-1] == ANSWER.strip() and len(drafts) == len(ANSWER.split())


def test_the_streamed_answer_is_the_answer_written_without_streaming() -> None:
    streamed, _, _ = _streamed(_Writer(ANSWER))
    plain = answer_question(context("safety valve facts"), QuerySettings(), "dfs", _Writer(ANSWER), page_text)
    assert streamed == plain


def test_a_contradicted_sentence_is_told_with_its_verdict_and_dropped_from_the_answer() -> None:
    wrong = ANSWER.replace("12 bar", "15 bar")
    answer, told, _ = _streamed(_Writer(wrong))
    assert told[0][1].verdict == "contradicted"
    assert "15 bar" not in answer.answer and len(told) == 3


def test_a_call_that_starts_again_tells_no_sentence_twice() -> None:
    answer, told, drafts = _streamed(_Writer(ANSWER, restart_after=15))
    # The cut-off call told its first sentence; the second call's text does not extend it, so
    # no sentence is told again while it is written, and the rest follow with the answer.
    assert [i for i, _ in told] == [0, 1, 2]
    assert [c for _, c in told] == answer.sentences
    assert told[0][1].text.startswith("Each safety valve") and drafts[15] == "Each" and drafts[-1] == ANSWER.strip()


def test_an_answer_the_model_ends_by_abstaining_tells_no_sentence_of_it() -> None:
    answer, told, _ = _streamed(_Writer(ABSTENTION))
    assert answer.abstained and not told
