"""Page verification: no page number enters a tree unchecked.

Every node's title is looked up on its start page, then on the page after and before; a title
found on a neighbour moves the node there (off-by-one). When most titles are missing from their
pages but appear a constant number of pages away (printed page numbers used as physical ones),
the whole tree is shifted by that offset and checked again. Nodes whose title is nowhere near
their pages keep their range and are marked `verified=False`.
"""

from __future__ import annotations

import re
from collections import Counter

from services.indexer.nesting import cover_children
from shared.model.tree import TreeNode, walk_tree
from shared.text.normalize import compact, tokenize

_LEADING_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|section|part|appendix|article|item)\s+)?[\dIVXivx]+(?:\.[\dA-Za-z]+)*[.):]?\s+",
    re.I,
)
_MIN_OFFSET_SUPPORT = 3
_OFFSET_SAMPLE = 60
_TOKEN_COVERAGE = 0.8


class _PageIndex:
    """Lazily computed matching forms of page text."""

    def __init__(self, pages: list[str]) -> None:
        self.pages = pages
        self._compact: dict[int, str] = {}
        self._tokens: dict[int, set[str]] = {}

    def compact(self, page: int) -> str:
        if page not in self._compact:
            self._compact[page] = compact(self.pages[page - 1])
        return self._compact[page]

    def tokens(self, page: int) -> set[str]:
        if page not in self._tokens:
            self._tokens[page] = set(tokenize(self.pages[page - 1]))
        return self._tokens[page]


class _TitleForms:
    __slots__ = ("full", "bare", "tokens")

    def __init__(self, title: str) -> None:
        self.full = compact(title)
        self.bare = compact(_LEADING_NUMBER.sub("", title, count=1))
        self.tokens = set(tokenize(title))


def _found(forms: _TitleForms, page: int, index: _PageIndex) -> bool:
    if not forms.full:
        return False
    text = index.compact(page)
    if forms.full in text or (len(forms.bare) >= 4 and forms.bare in text):
        return True
    if len(forms.tokens) >= 4:
        present = len(forms.tokens & index.tokens(page))
        return present >= _TOKEN_COVERAGE * len(forms.tokens)
    return False


def _check_nodes(nodes: list[TreeNode], index: _PageIndex, count: int) -> int:
    """Verify (and move by ±1) every node in place; returns how many were verified."""
    verified = 0
    for node in walk_tree(nodes):
        forms = _TitleForms(node.title)
        start = min(max(node.page_start, 1), count)
        end = min(max(node.page_end, start), count)
        node.verified = False
        for candidate in (start, start + 1, start - 1):
            if 1 <= candidate <= count and _found(forms, candidate, index):
                end = max(end + (candidate - start), candidate) if candidate > start else end
                start = candidate
                node.verified = True
                verified += 1
                break
        node.page_start, node.page_end = start, min(max(end, start), count)
    return verified


def _estimate_offset(nodes: list[TreeNode], index: _PageIndex, count: int) -> int:
    """Most common distance between where unverified titles are claimed and where they are."""
    deltas: Counter[int] = Counter()
    sampled = 0
    for node in walk_tree(nodes):
        if node.verified or sampled >= _OFFSET_SAMPLE:
            continue
        forms = _TitleForms(node.title)
        if len(forms.full) < 6:
            continue
        sampled += 1
        hits = [p for p in range(1, count + 1) if forms.full in index.compact(p)]
        if 0 < len(hits) <= 3:
            deltas.update({p - node.page_start for p in hits})
    if not deltas:
        return 0
    offset, support = deltas.most_common(1)[0]
    if offset == 0 or support < max(_MIN_OFFSET_SUPPORT, 0.3 * sampled):
        return 0
    return offset


def _shifted(nodes: list[TreeNode], offset: int, count: int) -> list[TreeNode]:
    copies = [n.model_copy(deep=True) for n in nodes]
    for node in walk_tree(copies):
        start = min(max(node.page_start + offset, 1), count)
        node.page_start = start
        node.page_end = min(max(node.page_end + offset, start), count)
    return copies


def verify_tree(nodes: list[TreeNode], pages: list[str]) -> list[TreeNode]:
    """Checked copy of `nodes`: ranges clamped to the document, starts corrected where the
    title is found one page away or at a consistent offset, `verified` set per node, and
    parents widened to cover their children."""
    count = len(pages)
    if count == 0:
        return [n.model_copy(deep=True) for n in nodes]
    index = _PageIndex(pages)
    checked = [n.model_copy(deep=True) for n in nodes]
    verified = _check_nodes(checked, index, count)
    total = sum(1 for _ in walk_tree(checked))
    if total >= _MIN_OFFSET_SUPPORT and verified < 0.5 * total:
        offset = _estimate_offset(checked, index, count)
        if offset:
            moved = _shifted(nodes, offset, count)
            if _check_nodes(moved, index, count) > verified:
                checked = moved
    cover_children(checked)
    return checked


def verified_share(nodes: list[TreeNode]) -> float:
    flags = [n.verified for n in walk_tree(nodes)]
    return sum(flags) / len(flags) if flags else 0.0
