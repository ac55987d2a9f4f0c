"""Tree from the PDF's own outline (bookmarks): the strongest evidence of structure."""

from __future__ import annotations

from services.indexer.extract import OutlineEntry
from services.indexer.furniture import content_lines
from services.indexer.nesting import Heading, nest
from shared.model.tree import TreeNode
from shared.text.normalize import title_key

# A bookmark target this close to the top edge (fraction of the page height) opens the page.
_TOP_FRACTION = 0.2
_LEADING_LINES = 3


def usable_outline(entries: list[OutlineEntry]) -> list[OutlineEntry]:
    """Bookmarks that point at a page; an outline needs two of them to be worth a tree."""
    usable = [e for e in entries if e.page is not None]
    return usable if len(usable) >= 2 else []


def opens_page(title: str, page_text: str, furniture: frozenset[str], top_fraction: float | None) -> bool:
    """Whether a section's title is the first content of its page."""
    key = title_key(title)
    if key:
        leading = title_key(" ".join(content_lines(page_text, furniture)[:_LEADING_LINES]))
        if leading.startswith(key[: max(8, len(key) // 2)]) or (key in leading and len(key) >= 8):
            return True
    if top_fraction is not None:
        return top_fraction <= _TOP_FRACTION
    return False


def build_outline_tree(
    entries: list[OutlineEntry],
    pages: list[str],
    furniture: frozenset[str],
) -> list[TreeNode]:
    headings: list[Heading] = []
    for entry in usable_outline(entries):
        assert entry.page is not None
        headings.append(
            Heading(
                level=entry.level,
                title=entry.title,
                page=entry.page,
                opens_page=opens_page(entry.title, pages[entry.page - 1], furniture, entry.top_fraction),
            )
        )
    return nest(headings, len(pages))
