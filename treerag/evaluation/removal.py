"""The document a negative pair asks: the stored one, or (evidence-removed pairs) a copy with
some pages blanked, indexed as the navigator would index that document."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace

from services.navigator.index import DocumentIndex
from shared.model.documents import DocumentTree
from shared.model.tree import TreeNode
from treerag.evaluation.folds import NegativePair


def without_pages(index: DocumentIndex, pages: Collection[int]) -> DocumentIndex:
    """`index`'s document with the text and page vectors of `pages` (1-based) blanked, and the
    summary of every section that opens on one of them (offline summaries are the section's
    opening text); the page numbering, titles and outline stay."""
    removed = set(pages)

    def kept(node: TreeNode) -> TreeNode:
        summary = "" if node.page_start in removed else node.summary
        return node.model_copy(update={"summary": summary, "children": [kept(c) for c in node.children]})

    tree = DocumentTree(doc_id=index.doc_id, nodes=[kept(index.nodes[r].node) for r in index.roots])
    text = ["" if number in removed else page for number, page in enumerate(index.pages, start=1)]
    blanked = DocumentIndex.build(index.record, tree, text)
    if index.dense is not None:
        vectors = index.dense.pages.copy()
        for number in removed:
            if 0 < number <= len(vectors):
                vectors[number - 1] = 0.0
        blanked.dense = replace(index.dense, pages=vectors)
    return blanked


@dataclass
class AskedDocuments:
    """The index each negative pair asks, blanked copies built once and kept for the run."""

    indexes: Mapping[str, DocumentIndex]
    _blanked: dict[tuple[str, tuple[int, ...]], DocumentIndex] = field(default_factory=dict, repr=False)

    def of(self, pair: NegativePair) -> DocumentIndex:
        if not pair.without_pages:
            return self.indexes[pair.doc]
        key = (pair.doc, pair.without_pages)
        if key not in self._blanked:
            self._blanked[key] = without_pages(self.indexes[pair.doc], pair.without_pages)
        return self._blanked[key]
