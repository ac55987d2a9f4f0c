"""Page verification: titles checked on their pages, off-by-one and offsets corrected."""

from __future__ import annotations

from services.indexer.verify import verify_tree
from shared.model.tree import TreeNode, walk_tree

FILLER = "Routine text about valves and pumps that appears on every page of the report."


def _pages(titles_at: dict[int, str], count: int) -> list[str]:
    return [f"{titles_at.get(n, '')}\n{FILLER} Page body {n}." for n in range(1, count + 1)]


def _node(title: str, start: int, end: int, children: list[TreeNode] | None = None) -> TreeNode:
    return TreeNode(id=title[:4], title=title, page_start=start, page_end=end, level=1, children=children or [])


def test_title_on_its_page_is_verified() -> None:
    pages = _pages({2: "Safety Rules", 5: "Maintenance Plan"}, 8)
    checked = verify_tree([_node("Safety Rules", 2, 4), _node("Maintenance Plan", 5, 8)], pages)
    assert [(n.page_start, n.page_end, n.verified) for n in checked] == [(2, 4, True), (5, 8, True)]


def test_off_by_one_start_is_corrected() -> None:
    pages = _pages({3: "Safety Rules", 6: "Maintenance Plan"}, 8)
    checked = verify_tree([_node("Safety Rules", 2, 4), _node("Maintenance Plan", 7, 8)], pages)
    assert [(n.page_start, n.verified) for n in checked] == [(3, True), (6, True)]


def test_matching_survives_case_hyphenation_ligatures_and_spacing() -> None:
    pages = _pages({4: "PUMP  MAIN-\nTENANCE \ufb01eld GUIDE"}, 6)
    checked = verify_tree([_node("Pump maintenance field guide", 4, 6)], pages)
    assert checked[0].verified


def test_printed_page_numbers_shifted_to_physical_pages() -> None:
    # The source counted pages from the first chapter: everything sits 4 pages later.
    titles = ["Scope", "Definitions of terms", "Inspection intervals", "Repair records", "Closing remarks"]
    pages = _pages({5 + 3 * i: t for i, t in enumerate(titles)}, 20)
    claimed = [_node(t, 1 + 3 * i, 3 + 3 * i) for i, t in enumerate(titles)]
    checked = verify_tree(claimed, pages)
    assert [n.page_start for n in checked] == [5, 8, 11, 14, 17]
    assert all(n.verified for n in checked)


def test_title_nowhere_near_is_left_unverified_and_clamped() -> None:
    pages = _pages({1: "Introduction"}, 5)
    checked = verify_tree([_node("Introduction", 1, 2), _node("Appendix on turbines", 3, 40)], pages)
    assert checked[0].verified
    assert not checked[1].verified
    assert (checked[1].page_start, checked[1].page_end) == (3, 5)


def test_parents_are_widened_to_cover_corrected_children() -> None:
    pages = _pages({2: "Operations", 6: "Night shift"}, 8)
    tree = [_node("Operations", 2, 4, [_node("Night shift", 5, 5)])]
    checked = verify_tree(tree, pages)
    parent, child = checked[0], checked[0].children[0]
    assert (child.page_start, child.verified) == (6, True)
    assert parent.page_start <= child.page_start and child.page_end <= parent.page_end


def test_verify_returns_copies_and_keeps_ids() -> None:
    pages = _pages({3: "Safety Rules"}, 4)
    original = [_node("Safety Rules", 2, 2)]
    checked = verify_tree(original, pages)
    assert original[0].page_start == 2 and checked[0].page_start == 3
    assert [n.id for n in walk_tree(checked)] == [n.id for n in walk_tree(original)]
