"""Follow-ups rewritten by the configured model (TREERAG_LLM), when there is one: it reads the
questions before and writes the last one out in full. Its reply is used only when it is one
question within the length a question may have; otherwise the rules complete it."""

from __future__ import annotations

import logging

from shared.adapters.llm.client import LLMClient
from shared.adapters.llm.errors import LLMError
from shared.model.query import QUESTION_MAX_CHARS

logger = logging.getLogger(__name__)

PREVIOUS_KEPT = 4
PROMPT = """Rewrite the last question of a conversation so that it can be understood on its own.
Keep the names, figures, periods and things the earlier questions give when the last question leans on them.
If the last question already stands alone, repeat it unchanged. Reply with the rewritten question only.

Earlier questions, oldest first:
{previous}

Last question: {question}
Rewritten question:"""


class ModelFollowUps:
    def __init__(self, llm: LLMClient, name: str) -> None:
        self.llm = llm
        self.name = name

    def standalone(self, question: str, previous: list[str]) -> str | None:
        earlier = "\n".join(f"- {text}" for text in previous[-PREVIOUS_KEPT:])
        try:
            reply = self.llm.generate_text(PROMPT.format(previous=earlier, question=question), purpose="follow_up")
        except (LLMError, RuntimeError) as exc:  # RuntimeError: the model failed after its retries
            logger.warning("follow-up not rewritten by the model", extra={"fields": {"error": type(exc).__name__}})
            return None
        lines = [line.strip().strip('"').strip() for line in reply.strip().splitlines() if line.strip()]
        text = lines[0].removeprefix("Rewritten question:").strip() if lines else ""
        return text if 0 < len(text) <= QUESTION_MAX_CHARS else None
