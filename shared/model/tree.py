"""The section tree: the one data structure every stage reads.

A tree is a list of top-level nodes; each node names a 1-based, inclusive physical page range
that covers its children's ranges.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, Field, model_validator


class TreeNode(BaseModel):
    id: str = Field(description="Stable within the document, e.g. '0003' (pre-order position).")
    title: str
    summary: str = ""
    page_start: int = Field(ge=1)
    page_end: int = Field(ge=1)
    level: int = Field(ge=1, description="1 for top-level sections.")
    verified: bool = Field(default=False, description="Title found on page_start (±1, corrected).")
    children: list[TreeNode] = Field(default_factory=list)

    @model_validator(mode="after")
    def _range_is_ordered(self) -> TreeNode:
        if self.page_end < self.page_start:
            raise ValueError(
                f"node {self.id!r} ends on page {self.page_end} before it starts on {self.page_start}"
            )
        return self

    @property
    def pages(self) -> range:
        return range(self.page_start, self.page_end + 1)

    @property
    def page_label(self) -> str:
        """'p. 4' or 'pp. 4-9', as printed beside a node."""
        if self.page_start == self.page_end:
            return f"p. {self.page_start}"
        return f"pp. {self.page_start}-{self.page_end}"

    def walk(self) -> Iterator[TreeNode]:
        """This node, then its descendants, in pre-order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def walk_tree(roots: list[TreeNode]) -> Iterator[TreeNode]:
    for root in roots:
        yield from root.walk()


def count_nodes(roots: list[TreeNode]) -> int:
    return sum(1 for _ in walk_tree(roots))


def find_node(roots: list[TreeNode], node_id: str) -> TreeNode | None:
    return next((n for n in walk_tree(roots) if n.id == node_id), None)
