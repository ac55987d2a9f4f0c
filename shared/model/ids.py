"""Identifiers every stage agrees on."""

from __future__ import annotations

import hashlib
from typing import Literal

# How a document's tree is built: the gateway accepts it, the indexer applies it.
BuilderChoice = Literal["auto", "outline", "layout", "windows", "llm"]


# Whose documents and queries are whose: a key's tenant (`treerag keys`), or this one where no key
# is asked for (the one-process CLI, a gateway with TREERAG_AUTH=off).
DEFAULT_TENANT = "default"
# A tenant name as `treerag keys create --tenant` accepts it.
TENANT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


def content_id(data: bytes) -> str:
    """Document id: the content hash, so the same bytes always get the same id."""
    return hashlib.sha256(data).hexdigest()[:16]


def document_id(data: bytes, tenant: str = DEFAULT_TENANT) -> str:
    """A tenant's id for a PDF: the same bytes get the same id within a tenant, and another id in
    every other tenant, so nothing stored under an id (pages, tree, vectors, cached answers) is
    shared between tenants. The default tenant's ids are the plain content hashes."""
    if tenant == DEFAULT_TENANT:
        return content_id(data)
    return hashlib.sha256(tenant.encode() + b"\0" + data).hexdigest()[:16]
