"""A query whose client streams: the navigator says where it routed and the verifier puts each
answer sentence on the bus as soon as it is checked, before the answer; a query nobody streams
costs no extra message, and a progress message that cannot be sent fails nothing."""

from __future__ import annotations

import asyncio
import time

from services.verifier.handlers import VerifierHandlers
from shared.model.events import AnswerVerified, NodesSelected, QueryEvent, QueryProgress, QueryReceived
from tests.support.fakes import RecordingPublisher
from tests.support.query.documents import plant_manual
from tests.support.stages import TENANT, QueryStages, question
from tests.unit.services.test_query_handlers import PUMP, ask, stages_with

PLANT = plant_manual(tenant=TENANT)


def streamed(text: str) -> QueryReceived:
    return question(text).model_copy(update={"progress": True})


async def test_a_streamed_query_is_routed_then_answered_sentence_by_sentence_before_its_answer() -> None:
    stages = await stages_with(PLANT)
    answer = await ask(stages, streamed(PUMP))

    progress = stages.bus.of_type(QueryProgress)
    [routed] = [p for p in progress if p.step == "routed"]
    selected = stages.bus.of_type(NodesSelected)[-1]
    assert routed.documents == selected.documents
    assert routed.pages[0] == (selected.navigation.passages[0].doc_id, selected.navigation.passages[0].pages[0])
    sentences = sorted((p for p in progress if p.step == "sentence"), key=lambda p: p.index)
    checks = answer.outcome.answer.sentences
    assert checks and [p.index for p in sentences] == list(range(len(checks)))
    assert [p.sentence for p in sentences] == checks
    # Each as the answer's text shows it, marker included: what a client prints as it arrives.
    assert " ".join(p.text for p in sentences) == answer.outcome.answer.answer
    assert all(p.question == "" and p.query_id == answer.query_id for p in progress)
    order = stages.bus.events
    assert max(order.index(p) for p in sentences) < order.index(answer)


async def test_a_query_nobody_streams_puts_no_progress_on_the_bus() -> None:
    stages = await stages_with(PLANT)
    await ask(stages, question(PUMP))
    assert stages.bus.of_type(QueryProgress) == []
    assert len(stages.bus.of_type(AnswerVerified)) == 1


class ProgressRefused(RecordingPublisher):
    """A broker that takes every event but progress."""

    async def publish(self, event: QueryEvent) -> None:  # type: ignore[override]
        if isinstance(event, QueryProgress):
            raise ConnectionError("progress topic unavailable")
        await super().publish(event)


async def test_progress_that_cannot_be_sent_neither_fails_nor_changes_the_answer() -> None:
    stages = await stages_with(PLANT)
    plain = await ask(stages, question(PUMP, query_id="plain"))
    refused = QueryStages(bus=ProgressRefused())
    await refused.repository.put_indexed(PLANT)
    answer = await ask(refused, streamed(PUMP))
    assert answer.outcome.answer.answer == plain.outcome.answer.answer
    assert refused.bus.of_type(QueryProgress) == []


class SlowProgress(RecordingPublisher):
    """A broker slow to acknowledge progress (a busy partition): each progress send takes 50 ms,
    and is recorded when acknowledged."""

    async def publish(self, event: QueryEvent) -> None:  # type: ignore[override]
        if isinstance(event, QueryProgress) and event.step == "sentence":
            await asyncio.sleep(0.05)
        await super().publish(event)


async def test_a_one_sentence_answer_has_its_sentence_on_the_bus_before_the_answer_is_stored_and_sent() -> None:
    slow = QueryStages(bus=SlowProgress())
    await slow.repository.put_indexed(PLANT)
    event = streamed(PUMP).model_copy(update={"settings": question(PUMP).settings.model_copy(
        update={"max_answer_sentences": 1})})

    answer = await ask(slow, event)

    [sentence] = [p for p in slow.bus.of_type(QueryProgress) if p.step == "sentence"]
    assert slow.bus.events.index(sentence) < slow.bus.events.index(answer)


class Writer:
    """A model that writes its answer from the first two passages it is given, a word every
    few milliseconds, each sentence citing its passage's page."""

    name = "llm:writer"

    def __init__(self) -> None:
        self.text = ""

    def generate(self, question, passages, notes=None, on_text=None):  # type: ignore[no-untyped-def]
        self.text = " ".join(f"{p.text.split('. ')[0].rstrip('.')} [{p.file_name}, p. {p.pages[0]}]."
                             for p in passages[:2])
        words = self.text.split(" ")
        for n in range(1, len(words) + 1):
            time.sleep(0.004)
            if on_text is not None:
                on_text(" ".join(words[:n]))
        return self.text


async def test_a_models_answer_is_put_on_the_bus_as_it_is_written_each_sentence_after_its_text() -> None:
    stages = await stages_with(PLANT)
    writer = Writer()
    stages.verifier = VerifierHandlers(stages.repository, stages.bus, stages.queries, generator=writer)
    answer = await ask(stages, streamed(PUMP))

    order = stages.bus.events
    drafts = [p for p in stages.bus.of_type(QueryProgress) if p.step == "draft"]
    sentences = [p for p in stages.bus.of_type(QueryProgress) if p.step == "sentence"]
    assert answer.outcome.answer.generator == "llm:writer" and len(sentences) == len(answer.outcome.answer.sentences)
    # Written a word every 4 ms and sent at most every 50 ms: far fewer messages than words.
    assert 2 <= len(drafts) < len(writer.text.split(" ")) / 2
    draft = ""
    for part in drafts:
        draft = draft[: part.index] + part.text
    assert draft == writer.text
    assert order.index(drafts[0]) < order.index(sentences[0]) < order.index(answer)
