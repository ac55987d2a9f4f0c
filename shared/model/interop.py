"""Import and export section trees in PageIndex's and TreeRAG's JSON formats.

Source node ids are kept as our node ids, so question sets that name expected sections by id
("CH1", "0004") still match after import. Page ranges are 1-based and inclusive in all three
formats; imported parents are widened to cover their children, as our schema requires.
"""

from __future__ import annotations

import re
from typing import Any

from shared.model.documents import DocumentTree
from shared.model.tree import TreeNode, walk_tree

_NUMBER = re.compile(r"\d+")
TREERAG_ROOT_ID = "ROOT"


class TreeFormatError(ValueError):
    """The JSON is not a tree in the announced format."""


def _cover_and_level(nodes: list[TreeNode], level: int = 1) -> None:
    for node in nodes:
        node.level = level
        if node.children:
            _cover_and_level(node.children, level + 1)
            node.page_start = min(node.page_start, *(c.page_start for c in node.children))
            node.page_end = max(node.page_end, *(c.page_end for c in node.children))


def _fill_missing_ids(nodes: list[TreeNode]) -> None:
    taken = {n.id for n in walk_tree(nodes) if n.id}
    for position, node in enumerate(walk_tree(nodes), start=1):
        if not node.id:
            candidate = f"{position:04d}"
            while candidate in taken:
                candidate += "b"
            node.id = candidate
            taken.add(candidate)


def _range(start: Any, end: Any, where: str) -> tuple[int, int]:
    try:
        first = int(start)
        last = int(end) if end is not None else first
    except (TypeError, ValueError) as exc:
        raise TreeFormatError(f"{where}: page numbers must be integers, got {start!r}-{end!r}") from exc
    first = max(first, 1)
    return first, max(last, first)


# PageIndex: {"doc_name": ..., "structure": [{title, start_index, end_index, node_id, nodes}]}


def import_pageindex(data: dict[str, Any], doc_id: str) -> DocumentTree:
    structure = data.get("structure") if isinstance(data, dict) else None
    if not isinstance(structure, list):
        raise TreeFormatError("not a PageIndex tree: expected an object with a 'structure' list")

    def convert(raw: dict[str, Any]) -> TreeNode:
        title = str(raw.get("title", "")).strip()
        start, end = _range(raw.get("start_index"), raw.get("end_index"), f"node {title!r}")
        return TreeNode(
            id=str(raw.get("node_id") or ""),
            title=title,
            summary=str(raw.get("summary") or raw.get("text_summary") or ""),
            page_start=start,
            page_end=end,
            level=1,
            children=[convert(child) for child in raw.get("nodes") or []],
        )

    nodes = [convert(raw) for raw in structure]
    _cover_and_level(nodes)
    _fill_missing_ids(nodes)
    return DocumentTree(doc_id=doc_id, nodes=nodes)


def export_pageindex(tree: DocumentTree, doc_name: str | None = None) -> dict[str, Any]:
    def convert(node: TreeNode) -> dict[str, Any]:
        out: dict[str, Any] = {
            "title": node.title,
            "start_index": node.page_start,
            "end_index": node.page_end,
            "node_id": node.id,
        }
        if node.summary:
            out["summary"] = node.summary
        if node.children:
            out["nodes"] = [convert(child) for child in node.children]
        return out

    return {"doc_name": doc_name or tree.doc_id, "structure": [convert(n) for n in tree.nodes]}


# TreeRAG: a bare root node {id, title, summary, page_ref: "5-12", children}


def _parse_page_ref(ref: Any, where: str) -> tuple[int, int] | None:
    if ref is None or ref == "":
        return None
    numbers = _NUMBER.findall(str(ref))
    if not numbers:
        raise TreeFormatError(f"{where}: page_ref {ref!r} holds no page number")
    return _range(numbers[0], numbers[-1], where)


def import_treerag_index(data: dict[str, Any], doc_id: str) -> DocumentTree:
    """The root node is kept (it carries the document's title and summary)."""
    if not isinstance(data, dict) or "title" not in data:
        raise TreeFormatError("not a TreeRAG tree: expected a root object with id, title, page_ref, children")

    def convert(raw: dict[str, Any]) -> TreeNode:
        title = str(raw.get("title", "")).strip()
        children = [convert(child) for child in raw.get("children") or []]
        pages = _parse_page_ref(raw.get("page_ref"), f"node {raw.get('id', title)!r}")
        if pages is None:
            if not children:
                raise TreeFormatError(f"node {raw.get('id', title)!r} has neither page_ref nor children")
            pages = (min(c.page_start for c in children), max(c.page_end for c in children))
        return TreeNode(
            id=str(raw.get("id") or ""),
            title=title,
            summary=str(raw.get("summary") or ""),
            page_start=pages[0],
            page_end=pages[1],
            level=1,
            children=children,
        )

    nodes = [convert(data)]
    _cover_and_level(nodes)
    _fill_missing_ids(nodes)
    return DocumentTree(doc_id=doc_id, nodes=nodes)


def _page_ref(node: TreeNode) -> str:
    return str(node.page_start) if node.page_start == node.page_end else f"{node.page_start}-{node.page_end}"


def export_treerag_index(tree: DocumentTree, title: str | None = None) -> dict[str, Any]:
    """A tree with one top node is exported with that node as the root; otherwise a root
    spanning the document is added."""

    def convert(node: TreeNode) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": node.id,
            "title": node.title,
            "summary": node.summary,
            "page_ref": _page_ref(node),
        }
        if node.children:
            out["children"] = [convert(child) for child in node.children]
        return out

    if len(tree.nodes) == 1:
        return convert(tree.nodes[0])
    if not tree.nodes:
        raise TreeFormatError(f"document {tree.doc_id} has an empty tree; nothing to export")
    first = min(n.page_start for n in tree.nodes)
    last = max(n.page_end for n in tree.nodes)
    return {
        "id": TREERAG_ROOT_ID,
        "title": title or tree.doc_id,
        "summary": "",
        "page_ref": f"{first}-{last}" if last > first else str(first),
        "children": [convert(n) for n in tree.nodes],
    }
