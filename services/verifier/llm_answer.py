"""Answers written by a language model from the compressed context only, with page citations.

The verifier checks what comes back exactly as it checks extractive answers: citations to pages
outside the context are removed and flagged, every sentence is scored against its cited page.
"""

from __future__ import annotations

import logging
import re

from shared.text.citations import format_citation, parse_citations
from services.verifier.detector import ABSTENTION
from shared.adapters.llm.client import LLMClient
from shared.app.answer_key import ANSWER_PROMPT_VERSION
from shared.model.query import Passage
from shared.text.language import LANGUAGE_NAMES, detect_language

logger = logging.getLogger(__name__)

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
# Models asked to abstain in English sometimes do it in the question's language.
_LOCAL_ABSTENTIONS = ("찾을 수 없", "見つかりません", "記載されていません", "not found in the documents")


def _document_label(passage: Passage) -> str:
    return passage.file_name or passage.doc_id


def _sources(passages: list[Passage], max_chars: int) -> str:
    blocks = []
    for number, passage in enumerate(passages, start=1):
        label = _document_label(passage)
        cite_as = ", ".join(format_citation(label, [page]) for page in passage.pages)
        title = f' — section "{passage.title}"' if passage.title else ""
        blocks.append(f"Source {number}{title}. Cite as: {cite_as}\n{passage.text.strip()[:max_chars]}")
    return "\n\n".join(blocks)


def answer_prompt(question: str, passages: list[Passage], *, max_sentences: int, max_chars_per_source: int) -> str:
    language = LANGUAGE_NAMES[detect_language(question)]
    example = format_citation(_document_label(passages[0]), passages[0].pages[:1] or [1]) if passages else "[doc, p. 1]"
    return (
        "Answer the question using only the sources below; do not add facts from elsewhere.\n"
        f"- Write in {language}, the language of the question, in at most {max_sentences} sentences.\n"
        "- End every sentence with the citation of the page it comes from, written exactly as in that "
        f"source's \"Cite as\" list, e.g. {example}. Cite only pages from those lists.\n"
        "- Prefer the sources' own wording for names, numbers and definitions.\n"
        f"- If the sources do not answer the question, reply exactly: {ABSTENTION}\n\n"
        f"Question: {question.strip()}\n\n{_sources(passages, max_chars_per_source)}\n\nAnswer:"
    )


class LLMAnswerGenerator:
    """`shared.ports.model_roles.AnswerGenerator` backed by a model."""

    prompt_version = ANSWER_PROMPT_VERSION

    def __init__(self, llm: LLMClient, *, max_sentences: int = 5, max_chars_per_source: int = 6000) -> None:
        self.llm = llm
        self.name = f"llm:{llm.model}"
        self.max_sentences = max_sentences
        self.max_chars_per_source = max_chars_per_source

    def generate(self, question: str, passages: list[Passage]) -> str:
        """The model's answer text; `ABSTENTION` when it finds no answer in the passages.
        Raises `shared.adapters.llm.LLMError` when the model cannot be reached."""
        if not passages:
            return ABSTENTION
        prompt = answer_prompt(
            question, passages, max_sentences=self.max_sentences, max_chars_per_source=self.max_chars_per_source
        )
        text = _FENCE.sub("", self.llm.generate_text(prompt, purpose="answer").strip()).strip()
        if not parse_citations(text) and any(marker in text.lower() for marker in _LOCAL_ABSTENTIONS):
            return ABSTENTION
        return text
