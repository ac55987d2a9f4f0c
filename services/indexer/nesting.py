"""From a flat, ordered list of headings to nested nodes with page ranges; id assignment."""

from __future__ import annotations

from dataclasses import dataclass

from shared.model.tree import TreeNode, walk_tree


@dataclass(slots=True)
class Heading:
    level: int  # 1 = top; deeper numbers nest under shallower ones
    title: str
    page: int  # 1-based physical page
    # True when nothing of the previous section precedes the heading on its page: the previous
    # section then ends on the page before.
    opens_page: bool = False


def nest(headings: list[Heading], page_count: int) -> list[TreeNode]:
    """Nodes in document order; a section runs until the next heading of its level or above."""
    roots: list[TreeNode] = []
    stack: list[tuple[int, TreeNode]] = []  # (heading level, node)
    for i, heading in enumerate(headings):
        end = page_count
        for following in headings[i + 1 :]:
            if following.level <= heading.level:
                end = following.page - 1 if following.opens_page else following.page
                break
        page = min(max(heading.page, 1), page_count)
        node = TreeNode(
            id="",
            title=heading.title,
            page_start=page,
            page_end=min(max(end, page), page_count),
            level=1,
        )
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        if stack:
            node.level = stack[-1][1].level + 1
            stack[-1][1].children.append(node)
        else:
            roots.append(node)
        stack.append((heading.level, node))
    return roots


def cover_children(nodes: list[TreeNode]) -> None:
    """Widen every parent's range so it covers its children's (bottom-up, in place)."""
    for node in nodes:
        if node.children:
            cover_children(node.children)
            node.page_start = min(node.page_start, *(c.page_start for c in node.children))
            node.page_end = max(node.page_end, *(c.page_end for c in node.children))


def relevel(nodes: list[TreeNode], level: int = 1) -> None:
    for node in nodes:
        node.level = level
        relevel(node.children, level + 1)


def assign_ids(nodes: list[TreeNode]) -> None:
    """Pre-order position, zero-padded: "0001", "0002", ... stable for the same tree."""
    for position, node in enumerate(walk_tree(nodes), start=1):
        node.id = f"{position:04d}"
