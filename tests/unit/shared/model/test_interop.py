"""PageIndex and TreeRAG trees: import, export, round trips, ids kept."""

from __future__ import annotations

import json

import pytest

from services.indexer.pipeline import index_pdf
from shared.model.interop import (
    TreeFormatError,
    export_pageindex,
    export_treerag_index,
    import_pageindex,
    import_treerag_index,
)
from shared.model.tree import find_node, walk_tree
from tests.support import pdfs

PAGEINDEX = {
    "doc_name": "report.pdf",
    "structure": [
        {"title": "Intro", "start_index": 1, "end_index": 2, "node_id": "0000"},
        {
            "title": "Methods",
            "start_index": 3,
            "end_index": 3,
            "node_id": "0001",
            "nodes": [{"title": "Sampling", "start_index": 4, "end_index": 5, "node_id": "0002"}],
        },
    ],
}
TREERAG = {
    "id": "ROOT",
    "title": "Report",
    "summary": "All of it",
    "page_ref": "1-9",
    "children": [
        {"id": "CH1", "title": "One", "summary": "s1", "page_ref": "1-4",
         "children": [{"id": "SEC1.1", "title": "One.one", "summary": "s11", "page_ref": "2"}]},
        {"id": "CH2", "title": "Two", "summary": "s2", "page_ref": "5-9"},
    ],
}


def test_pageindex_import_keeps_ids_and_widens_parents() -> None:
    tree = import_pageindex(PAGEINDEX, "doc1")
    methods = find_node(tree.nodes, "0001")
    assert methods is not None and methods.title == "Methods"
    # PageIndex lets a child run past its parent; our schema makes the parent cover it.
    assert (methods.page_start, methods.page_end) == (3, 5)
    assert find_node(tree.nodes, "0002").level == 2  # type: ignore[union-attr]


def test_pageindex_round_trip() -> None:
    tree = import_pageindex(PAGEINDEX, "doc1")
    again = import_pageindex(export_pageindex(tree, "report.pdf"), "doc1")
    assert again == tree


def test_treerag_import_parses_page_refs_and_keeps_ids() -> None:
    tree = import_treerag_index(TREERAG, "doc2")
    section = find_node(tree.nodes, "SEC1.1")
    assert section is not None and (section.page_start, section.page_end) == (2, 2)
    assert find_node(tree.nodes, "CH2").pages == range(5, 10)  # type: ignore[union-attr]
    assert export_treerag_index(tree) == TREERAG


def test_bad_trees_are_refused_with_reason() -> None:
    with pytest.raises(TreeFormatError, match="structure"):
        import_pageindex({"nodes": []}, "d")
    with pytest.raises(TreeFormatError, match="page_ref"):
        import_treerag_index({"id": "R", "title": "x", "page_ref": "none"}, "d")


def test_our_tree_round_trips_through_both_formats() -> None:
    data, _ = pdfs.manual_pdf()
    tree = index_pdf(data, "manual.pdf").tree
    via_pageindex = import_pageindex(json.loads(json.dumps(export_pageindex(tree))), tree.doc_id)
    via_treerag = import_treerag_index(export_treerag_index(tree), tree.doc_id)
    expected = [(n.id, n.title, n.page_start, n.page_end, n.summary) for n in walk_tree(tree.nodes)]
    assert [(n.id, n.title, n.page_start, n.page_end, n.summary) for n in walk_tree(via_pageindex.nodes)] == expected
    # The TreeRAG format has one root: ours is added around the top-level nodes.
    root = via_treerag.nodes[0]
    assert [(n.id, n.title, n.page_start, n.page_end, n.summary) for n in walk_tree(root.children)] == expected


@pytest.mark.shared_data
def test_shared_samples_round_trip(shared_data) -> None:  # type: ignore[no-untyped-def]
    structures = sorted((shared_data / "pdfs" / "pageindex").glob("*_structure.json"))
    indices = sorted((shared_data / "treerag" / "indices").glob("*.json"))
    assert structures and indices
    for path in structures:
        raw = json.loads(path.read_text())
        tree = import_pageindex(raw, "d")
        assert import_pageindex(export_pageindex(tree), "d") == tree
        source_ids = set()

        def collect(nodes, into=source_ids):  # type: ignore[no-untyped-def]
            for node in nodes:
                into.add(node["node_id"])
                collect(node.get("nodes") or [], into)

        collect(raw["structure"])
        assert {n.id for n in walk_tree(tree.nodes)} == source_ids
    for path in indices:
        tree = import_treerag_index(json.loads(path.read_text()), "d")
        assert import_treerag_index(export_treerag_index(tree), "d") == tree


@pytest.mark.shared_data
def test_benchmark_expected_sections_resolve_after_import(shared_data) -> None:  # type: ignore[no-untyped-def]
    folder = shared_data / "treerag"
    for bench in sorted((folder / "benchmarks").glob("*.json")):
        for question in json.loads(bench.read_text())["questions"]:
            index = folder / "indices" / question["document_id"]
            tree = import_treerag_index(json.loads(index.read_text()), "d")
            for section in question["expected_sections"]:
                assert find_node(tree.nodes, section) is not None, (bench.name, section)
