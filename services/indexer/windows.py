"""Fixed page windows: the last-resort tree, and the way long leaves are split further."""

from __future__ import annotations

from services.indexer.extract import PageLayout
from services.indexer.furniture import content_lines
from services.indexer.layout import detect_headings
from services.indexer.nesting import nest, relevel
from shared.model.tree import TreeNode

_TITLE_CHARS = 80


def window_title(page_text: str, furniture: frozenset[str], first: int, last: int) -> str:
    """The first content line of the window's first page, so the title is checkable on it."""
    for line in content_lines(page_text, furniture)[:5]:
        if sum(ch.isalpha() for ch in line) >= 3:
            cut = line[:_TITLE_CHARS]
            # Cut at a word boundary so the title stays a substring of the page text.
            return cut if len(line) <= _TITLE_CHARS else cut.rsplit(" ", 1)[0]
    return f"Pages {first}-{last}" if last > first else f"Page {first}"


def build_windows(
    pages: list[str], furniture: frozenset[str], window: int, first: int = 1, last: int | None = None,
    level: int = 1,
) -> list[TreeNode]:
    """Consecutive windows of `window` pages over [first, last]."""
    last = len(pages) if last is None else last
    nodes: list[TreeNode] = []
    for start in range(first, last + 1, window):
        end = min(start + window - 1, last)
        nodes.append(
            TreeNode(
                id="",
                title=window_title(pages[start - 1], furniture, start, end),
                page_start=start,
                page_end=end,
                level=level,
            )
        )
    return nodes


def split_long_leaves(
    nodes: list[TreeNode],
    pages: list[str],
    furniture: frozenset[str],
    max_pages: int,
    window: int,
    layouts: list[PageLayout] | None = None,
    styles_reliable: bool = True,
) -> None:
    """Give every leaf longer than `max_pages` children: sub-headings found by layout inside
    its range when layout is known, otherwise page windows (in place)."""
    for node in nodes:
        if node.children:
            split_long_leaves(node.children, pages, furniture, max_pages, window, layouts, styles_reliable)
            continue
        length = node.page_end - node.page_start + 1
        if length <= max_pages:
            continue
        children: list[TreeNode] = []
        if layouts is not None:
            children = _sub_headings(node, layouts, furniture, styles_reliable)
        if len(children) >= 2:
            # Sub-sections that are still too long get windows, not another layout pass.
            split_long_leaves(children, pages, furniture, max_pages, window)
        else:
            children = build_windows(
                pages, furniture, min(window, max_pages), node.page_start, node.page_end, node.level + 1
            )
        node.children = children


def _sub_headings(
    node: TreeNode, layouts: list[PageLayout], furniture: frozenset[str], styles_reliable: bool
) -> list[TreeNode]:
    """Headings detected within the node's own pages only (its own style scale)."""
    local = layouts[node.page_start - 1 : node.page_end]
    headings = [
        h for h in detect_headings(local, furniture, styles_reliable)
        if not (h.page == 1 and h.title.strip().lower() == node.title.strip().lower())
    ]
    if len(headings) < 2:
        return []
    for heading in headings:
        heading.page += node.page_start - 1
    top = min(h.level for h in headings)
    for heading in headings:
        heading.level -= top - 1
    children = nest(headings, node.page_end)
    # Text before the first sub-heading stays with the parent; nest() ran to the node's end.
    for child in children:
        child.page_start = max(child.page_start, node.page_start)
    relevel(children, node.level + 1)
    return children
