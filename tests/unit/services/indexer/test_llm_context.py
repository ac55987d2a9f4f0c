"""A model with a small context window gets calls that fit it: the tree builder sizes its page
chunks and summary batches to the client's `context_tokens` (TREERAG_LLM_CONTEXT_TOKENS)."""

from __future__ import annotations

import pytest

from services.indexer.llm_tree import CHARS_PER_TOKEN, TreeOptions, page_chunks
from services.indexer.pipeline import IndexOptions, index_pdf
from shared.adapters.llm.errors import LLMUnavailableError
from shared.adapters.llm.factory import make_llm
from shared.settings import Settings
from tests.support import pdfs


class SmallWindowModel:
    """Records every prompt, then fails as an unreachable server does (the offline tree follows)."""

    model = "small"
    provider = "openai"

    def __init__(self, context_tokens: int | None) -> None:
        self.context_tokens = context_tokens
        self.prompts: list[str] = []

    def generate_json(self, prompt, schema, *, purpose):  # type: ignore[no-untyped-def]
        return self.generate_text(prompt, purpose=purpose)

    def generate_text(self, prompt, *, purpose):  # type: ignore[no-untyped-def]
        self.prompts.append(prompt)
        raise LLMUnavailableError("stopped after recording the prompt")


@pytest.mark.parametrize("window", [2048, 4096])
def test_the_tree_builders_prompts_fit_a_small_context_window(window: int) -> None:
    data, _ = pdfs.manual_pdf(chapters=4, sections=3, pages_per_section=3, outline=False)
    model = SmallWindowModel(window)
    indexed = index_pdf(data, "manual.pdf", IndexOptions(builder="llm"), llm=model)
    assert model.prompts, "the builder asked the model"
    # Room is left for the reply: a prompt takes at most three quarters of the window.
    assert max(len(p) for p in model.prompts) <= 0.75 * window * CHARS_PER_TOKEN
    assert indexed.tree.nodes and any("llm" in w.lower() for w in indexed.record.warnings)


def test_without_a_window_the_calls_are_sized_for_long_context_models() -> None:
    pages = ["x" * 3_000] * 120
    assert page_chunks(pages, TreeOptions.for_context(None)) == [(1, 79), (80, 120)]
    small = page_chunks(pages, TreeOptions.for_context(8192))
    assert len(small) == 120 // 2 and all(last - first == 1 for first, last in small)


def test_the_setting_reaches_the_client() -> None:
    settings = Settings(llm="openai", llm_model="smollm2", llm_base_url="http://127.0.0.1:1/v1",
                        llm_context_tokens=4096)
    client = make_llm(settings)
    assert client is not None and client.context_tokens == 4096
    assert make_llm(settings.model_copy(update={"llm_context_tokens": None})).context_tokens is None  # type: ignore[union-attr]
