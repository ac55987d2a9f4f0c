"""Answers written by a language model from the compressed context only, with page citations.

The verifier checks what comes back exactly as it checks extractive answers: citations to pages
outside the context are removed and flagged, every sentence is scored against its cited page.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from services.verifier.detector import ABSTENTION
from shared.adapters.llm.client import LLMClient
from shared.app.answer_key import ANSWER_PROMPT_VERSION
from shared.model.query import Passage, SourceNote
from shared.text.citations import format_citation, parse_citations
from shared.text.language import LANGUAGE_NAMES, detect_language

logger = logging.getLogger(__name__)

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
# Models asked to abstain in English sometimes do it in the question's language.
_LOCAL_ABSTENTIONS = ("찾을 수 없", "見つかりません", "記載されていません", "not found in the documents")


def _unfenced(text: str) -> str:
    """A reply without the code fence some models wrap prose in."""
    return _FENCE.sub("", text.strip()).strip()


def _document_label(passage: Passage) -> str:
    return passage.file_name or passage.doc_id


def _sources(passages: list[Passage], notes: list[SourceNote], max_chars: int) -> str:
    blocks = []
    for number, (passage, note) in enumerate(zip(passages, notes, strict=True), start=1):
        label = _document_label(passage)
        cite_as = ", ".join(format_citation(label, [page]) for page in passage.pages)
        lines = [f"Source {number}. Cite as: {cite_as}"]
        if note.document:
            lines.append(f"Document: {note.document}")
        path = [*passage.section_path, passage.title] if passage.title else passage.section_path
        if path:
            lines.append(f"Section: {' > '.join(path)}")
        if note.table:
            lines.append(f"Table row the question names, {note.table}")
        blocks.append("\n".join(lines) + "\n" + passage.text.strip()[:max_chars])
    return "\n\n".join(blocks)


def answer_prompt(question: str, passages: list[Passage], *, max_sentences: int, max_chars_per_source: int,
                  notes: list[SourceNote] | None = None) -> str:
    """The prompt a model answers from: the rules, the question, then each source with what the
    reader is told about it (`notes`, one per passage: its document's card, the table row the
    question names) and its text."""
    language = LANGUAGE_NAMES[detect_language(question)]
    example = format_citation(_document_label(passages[0]), passages[0].pages[:1] or [1]) if passages else "[doc, p. 1]"
    told = notes if notes is not None and len(notes) == len(passages) else [SourceNote() for _ in passages]
    return (
        "Answer the question using only the sources below; do not add facts from elsewhere.\n"
        f"- Write in {language}, the language of the question, in at most {max_sentences} sentences.\n"
        "- End every sentence with the citation of the page it comes from, written exactly as in that "
        f"source's \"Cite as\" list, e.g. {example}. Cite only pages from those lists.\n"
        "- For an amount, state the value with its unit and scale and the period it is for, as the table "
        "prints them.\n"
        "- Prefer the sources' own wording for names, numbers and definitions.\n"
        f"- If the sources do not answer the question, reply exactly: {ABSTENTION}\n\n"
        f"Question: {question.strip()}\n\n{_sources(passages, told, max_chars_per_source)}\n\nAnswer:"
    )


class LLMAnswerGenerator:
    """`shared.ports.model_roles.AnswerGenerator` backed by a model."""

    prompt_version = ANSWER_PROMPT_VERSION

    def __init__(self, llm: LLMClient, *, max_sentences: int = 5, max_chars_per_source: int = 6000) -> None:
        self.llm = llm
        self.name = f"llm:{llm.model}"
        self.max_sentences = max_sentences
        self.max_chars_per_source = max_chars_per_source

    def generate(self, question: str, passages: list[Passage], notes: list[SourceNote] | None = None,
                 on_text: Callable[[str], None] | None = None) -> str:
        """The model's answer text; `ABSTENTION` when it finds no answer in the passages; with
        `on_text`, the text so far as the model writes it. Raises `shared.adapters.llm.LLMError`
        when the model cannot be reached."""
        if not passages:
            return ABSTENTION
        prompt = answer_prompt(question, passages, max_sentences=self.max_sentences,
                               max_chars_per_source=self.max_chars_per_source, notes=notes)
        told = None if on_text is None else (lambda draft: on_text(_unfenced(draft)))
        text = _unfenced(self.llm.generate_text(prompt, purpose="answer", on_text=told))
        if not parse_citations(text) and any(marker in text.lower() for marker in _LOCAL_ABSTENTIONS):
            return ABSTENTION
        return text
