"""When a document is (re)indexed and which tree version it gets: one rule for the gateway,
the indexer stage and `treerag index`."""

from __future__ import annotations

from dataclasses import dataclass

from shared.model.documents import DocumentRecord, DocumentStatus, IndexedDocument
from shared.model.ids import BuilderChoice
from shared.ports.repository import IndexedDocuments
from shared.text.page_analysis import pages_digest


@dataclass(frozen=True)
class IndexDecision:
    index: bool
    rebuild: bool
    reason: str


def decide_indexing(existing: DocumentRecord | None, builder: BuilderChoice, force: bool = False) -> IndexDecision:
    """Index a new, failed or unfinished document; rebuild a ready one only when asked to
    (`force`) or when another builder than the one that built its tree is named."""
    if existing is None:
        return IndexDecision(index=True, rebuild=False, reason="new document")
    other_builder = builder != "auto" and existing.builder is not None and existing.builder.value != builder
    if force or other_builder:
        why = "rebuild requested" if force else f"builder {builder} asked, tree built by {existing.builder}"
        return IndexDecision(index=True, rebuild=True, reason=why)
    if existing.status != DocumentStatus.READY:
        # Failed, or uploaded and never finished (a lost publish, a crash): index it again.
        return IndexDecision(index=True, rebuild=False, reason=f"document is {existing.status.value}")
    return IndexDecision(index=False, rebuild=False, reason="already indexed")


def has_tree(record: DocumentRecord | None) -> bool:
    """A record gets its builder when its tree is stored."""
    return record is not None and record.builder is not None


def next_version(previous: DocumentRecord | None, built: DocumentRecord) -> int:
    """A new tree replacing a stored one gets the next version, so answer caches and navigator
    indexes drop the old one; a first tree keeps the record's version."""
    if previous is None:
        return built.version
    return previous.version + 1 if has_tree(previous) else previous.version


async def store_indexed(repository: IndexedDocuments, indexed: IndexedDocument) -> None:
    """Pages, tree, vectors, page analysis and recognised words first, the record last: a
    record marked ready always has them. A tree built without vectors or without an analysis
    drops the older version's, so no stale vector or analysis is read."""
    await repository.put_pages(indexed.record.doc_id, indexed.pages)
    await repository.put_tree(indexed.tree)
    if indexed.embeddings is not None:
        await repository.put_embeddings(indexed.embeddings)
    else:
        await repository.delete_embeddings(indexed.record.doc_id)
    if indexed.analysis is not None:
        await repository.put_analysis(indexed.record.doc_id, indexed.analysis)
    else:
        await repository.delete_analysis(indexed.record.doc_id)
    await repository.put_text_layers(indexed.record.doc_id, indexed.text_layers)
    # The record vouches for the pages it is stored with, so a reader of the analysis need not
    # read them to know it describes them.
    indexed.record.pages_digest = pages_digest(indexed.pages)
    await repository.put_document(indexed.record)
