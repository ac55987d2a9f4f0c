"""The model options the CLI commands share (`--llm`, `--llm-model`): flags override the
environment (TREERAG_LLM, TREERAG_LLM_MODEL)."""

from __future__ import annotations

import argparse
from pathlib import Path

from shared.adapters.embedded.store import EmbeddedRepository
from shared.adapters.llm.call_cache import DirectoryCallStore
from shared.adapters.llm.client import BaseLLMClient
from shared.adapters.llm.factory import make_llm
from shared.settings import Settings, get_settings

PROVIDERS = ("gemini", "openai", "off")

# Said whenever a command needs a model and none is configured.
HOW_TO_CONFIGURE = (
    "set TREERAG_LLM=gemini with GOOGLE_API_KEY, or TREERAG_LLM=openai with TREERAG_LLM_MODEL and "
    "TREERAG_LLM_BASE_URL (a local Ollama/vLLM server), or pass --llm"
)


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model (default: the TREERAG_LLM* environment; offline if unset)")
    group.add_argument("--llm", choices=PROVIDERS, default=None, help="Model provider; overrides TREERAG_LLM.")
    group.add_argument("--llm-model", default=None, metavar="M", help="Model name; overrides TREERAG_LLM_MODEL.")


def llm_settings(args: argparse.Namespace) -> Settings:
    """The environment's settings with the command's --llm/--llm-model applied."""
    settings = get_settings()
    overrides = {}
    if getattr(args, "llm", None):
        overrides["llm"] = args.llm
    if getattr(args, "llm_model", None):
        overrides["llm_model"] = args.llm_model
    return settings.model_copy(update=overrides) if overrides else settings


def call_store_for(store_dir: Path) -> DirectoryCallStore:
    """Model replies cached beside the documents, so re-indexing or re-asking costs no call."""
    return DirectoryCallStore(EmbeddedRepository(store_dir))


def make_cli_llm(args: argparse.Namespace, store_dir: Path, *, persist_replies: bool = True) -> BaseLLMClient | None:
    """The configured client or None (offline). Raises `shared.adapters.llm.LLMConfigError` when a
    provider is chosen but incomplete (the message names the missing variable).
    `persist_replies=False` keeps model replies for this process only."""
    store = call_store_for(store_dir) if persist_replies else None
    return make_llm(llm_settings(args), call_store=store)


def usage_line(llm: BaseLLMClient) -> str:
    """One line on what the model cost in this command: requests, cache hits, tokens, dollars."""
    total = llm.usage.total()
    purposes = ", ".join(f"{name} {u.calls}" for name, u in sorted(llm.usage.by_purpose().items()) if u.calls)
    return (
        f"model {llm.provider}:{llm.model}: {total.calls} request(s)" + (f" ({purposes})" if purposes else "")
        + f", {total.cache_hits} cached, {total.input_tokens} input / {total.output_tokens} output tokens, "
        f"~${total.cost_usd:.4f}"
    )
