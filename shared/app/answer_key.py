"""The answer-cache key: one rule for the navigator (which looks answers up), the verifier
(which stores them) and the one-process engine. Same tenant, question, document versions,
settings, answering model and scorer give the same key; anything else that can change an answer
changes it, and no tenant is ever served an answer another tenant's query stored.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json

from shared.model.ids import DEFAULT_TENANT
from shared.model.query import QuerySettings
from shared.ports.model_roles import AnswerGenerator, NodeScorer
from shared.text.language import detect_language

EXTRACTIVE = "extractive"
# The answer prompt's version: bump it when the prompt changes, so cached model answers miss.
ANSWER_PROMPT_VERSION = "answer-v2"  # 2: each source names its document, section path and the table row asked about
# Bump when the key's material or the cached value's shape changes: old entries then miss.
KEY_SCHEMA_VERSION = 4  # 2: sentences carry verdicts and evidence windows; 3: the ranking model; 4: the tenant


def _product_version() -> str:
    # A new release may navigate or verify differently: its answers must not be served from
    # entries an older release wrote.
    try:
        return importlib.metadata.version("treerag")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


PRODUCT_VERSION = _product_version()


def generator_name(llm: object | None) -> str:
    """How answers are made: 'extractive' offline, else 'llm:<model>'."""
    model = getattr(llm, "model", None)
    return f"llm:{model}" if llm is not None and model else EXTRACTIVE


def answer_cache_key(
    question: str,
    documents: list[tuple[str, int]],
    settings: QuerySettings,
    *,
    model: str,
    language: str,
    prompt_version: str,
    ranker: str = "",
    tenant: str = DEFAULT_TENANT,
) -> str:
    """SHA-256 (hex) of a canonical JSON of the tenant, the question, the (doc_id, version) pairs, every
    QuerySettings field (read from the model, so a new setting is never forgotten), the
    model ("extractive" offline), the answer language, the prompt version, the page-ranking
    model and the product release."""
    material = {
        "key_schema": KEY_SCHEMA_VERSION,
        "tenant": tenant,
        "product": PRODUCT_VERSION,
        "question": " ".join(question.split()),
        "documents": sorted([str(doc_id), int(version)] for doc_id, version in documents),
        "settings": settings.model_dump(mode="json"),
        "model": model,
        "language": language,
        "prompt_version": prompt_version,
        "ranker": ranker,
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def answering_name(generator: AnswerGenerator | str | None, scorer: NodeScorer | None = None) -> str:
    """What made an answer: the generator's name, extended with the node scorer's when a
    different model scored the nodes (its ranking changes the answer too)."""
    name = generator if isinstance(generator, str) else (generator.name if generator is not None else EXTRACTIVE)
    scorer_name = getattr(scorer, "name", type(scorer).__name__) if scorer is not None else None
    if scorer_name is not None and scorer_name != name:
        name = f"{name}|scoring:{scorer_name}"
    return name


def query_answer_key(
    question: str,
    documents: list[tuple[str, int]],
    settings: QuerySettings,
    generator: AnswerGenerator | str | None,
    scorer: NodeScorer | None = None,
    *,
    ranker: str = "",
    tenant: str = DEFAULT_TENANT,
) -> str:
    """`ranker`: the digest of the model that orders pages (a refitted model ranks otherwise);
    `tenant`: whose query it is (answers are never shared between tenants)."""
    name = answering_name(generator, scorer)
    return answer_cache_key(
        question,
        documents,
        settings,
        model=name,
        language=detect_language(question),
        prompt_version=ANSWER_PROMPT_VERSION if name != EXTRACTIVE else EXTRACTIVE,
        ranker=ranker,
        tenant=tenant,
    )
