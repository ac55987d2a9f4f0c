"""A scripted "model" for the local provider server: it answers each kind of prompt the product
sends (structure, summaries, scoring, answers, judging) from what the test tells it, with
optional scripted mistakes (wrong page numbers, citations outside the context)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shared.text.normalize import tokenize
from tests.support.llm.fake_provider import Call, Reply

_PAGE_TAG = re.compile(r"<page (\d+)>")
_SECTION = re.compile(r'<section id="([^"]+)" title="([^"]*)"')
_CANDIDATE = re.compile(r"^(\d+)\. (.+)$", re.M)
# A source: its citation line, the lines the reader is told about it (document, section, table
# row), then its text.
_SOURCE = re.compile(r"^Source \d+.*?Cite as: (?P<cites>.+?)\n(?:(?:Document|Section|Table row)[^\n]*\n)*"
                     r"(?P<text>.*?)(?=\n\nSource \d+|\n\nAnswer:)", re.S | re.M)
_QUESTION = re.compile(r"^Question: (.+)$", re.M)


@dataclass
class ScriptedHeading:
    level: int
    title: str
    page: int


@dataclass
class ScriptedModel:
    """Responder for FakeProvider. `page_errors` maps a title to the page the model claims."""

    headings: list[ScriptedHeading] = field(default_factory=list)
    page_errors: dict[str, int] = field(default_factory=dict)
    cite_page: int | None = None  # when set, answers cite this page instead of the source's
    kinds: list[str] = field(default_factory=list)  # the kind of every prompt answered

    def __call__(self, call: Call) -> Reply:
        prompt = call.prompt
        if "table of contents of a" in prompt:
            return self._record("tree", self._structure(prompt))
        if "Summarise each section" in prompt:
            return self._record("summaries", self._summaries(prompt))
        if "navigating a document's table of contents" in prompt:
            return self._record("scoring", self._scores(prompt))
        if "Answer the question using only the sources" in prompt:
            return self._record("answer", self._answer(prompt))
        if "You grade an answer" in prompt:
            return self._record("judge", Reply.json({"faithfulness": 0.9, "relevance": 1.0, "completeness": 0.7, "rationale": "ok"}))
        return Reply(status=400, raw_body='{"error": {"code": 400, "message": "unrecognised prompt"}}')

    def _record(self, kind: str, reply: Reply) -> Reply:
        self.kinds.append(kind)
        return reply

    def count(self, kind: str) -> int:
        return self.kinds.count(kind)

    def _structure(self, prompt: str) -> Reply:
        pages = [int(p) for p in _PAGE_TAG.findall(prompt)]
        first, last = min(pages), max(pages)
        sections = [
            {"title": h.title, "level": h.level, "start_page": self.page_errors.get(h.title, h.page)}
            for h in self.headings
            if first <= h.page <= last
        ]
        return Reply.json({"sections": sections})

    def _summaries(self, prompt: str) -> Reply:
        return Reply.json({"summaries": [{"id": i, "summary": f"Explains {t}."} for i, t in _SECTION.findall(prompt)]})

    def _scores(self, prompt: str) -> Reply:
        question = set(tokenize(_QUESTION.search(prompt).group(1)))
        scores = []
        for index, text in _CANDIDATE.findall(prompt.split("Sections:", 1)[1]):
            words = set(tokenize(text))
            scores.append({"index": int(index), "score": round(len(words & question) / max(1, len(question)), 3)})
        return Reply.json({"scores": scores})

    def _answer(self, prompt: str) -> Reply:
        question = set(tokenize(_QUESTION.search(prompt).group(1)))
        best: tuple[float, str, str] | None = None
        for source in _SOURCE.finditer(prompt):
            cite = source.group("cites").split("], ")[0].rstrip("]") + "]"
            for sentence in re.split(r"(?<=\.)\s+", source.group("text")):
                overlap = len(set(tokenize(sentence)) & question)
                if best is None or overlap > best[0]:
                    best = (overlap, sentence.strip(), cite)
        if best is None or best[0] == 0:
            return Reply(text="Not found in the documents.")
        _, sentence, cite = best
        if self.cite_page is not None:
            cite = re.sub(r"p\. \d+", f"p. {self.cite_page}", cite)
        return Reply(text=f"{sentence} {cite}")
