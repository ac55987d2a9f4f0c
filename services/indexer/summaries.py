"""Offline summaries: up to three key sentences of a node's own text, ranked by TF-IDF.

Inverse document frequencies are computed once per document (pages are the documents, so a
word common to every page weighs little); every candidate sentence of every node is then
scored against them, which keeps this linear in the size of the PDF. The weighting is
scikit-learn's smoothed TF-IDF, written out here: importing scikit-learn alone takes longer
(about 1 s) than summarising a 2,400-page manual.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from services.indexer.furniture import content_lines
from shared.model.tree import TreeNode, walk_tree
from shared.text.normalize import DOT_LEADER, compact, split_sentences, tokenize

_MAX_SOURCE_CHARS = 2000  # of a node's own text: its key sentences are near the start
_MAX_CANDIDATES = 8
_MIN_WORDS, _MAX_WORDS = 4, 60
_FIT_PAGES = 200  # idf from an even sample of pages: stable, and bounded cost on huge PDFs
_FALLBACK_CHARS = 200
_LISTED_CHILDREN = 6  # titles a summary of a parent without text names
_CITED_TITLE_CHARS = 60  # of an earlier section's title a repeated summary names
_LETTERS = re.compile(r"[^\W\d_]+")
# A word: two letters in a row. Text without one (a column of years, a page number, a rule of
# underscores, a heading set in spaced capitals) says nothing a reader can use as a summary.
_WORD = re.compile(r"[^\W\d_]{2}")


def title_probe(title: str) -> str:
    """A few letters every line carrying `title` holds as printed (lower case): the start of its
    first word, a cheap filter before lines are normalised."""
    letters = _LETTERS.search(title.lower())
    return letters.group(0)[:4] if letters else ""


def _title_line(lines: list[str], title: str, probe: str) -> int | None:
    """Index of the line that carries `title` (compact form; `probe`: `title_probe` of it as
    printed): a heading line, not a mention. A line that is the title plus a number
    ("abbreviate 7") is a running header or a contents entry, used only when nothing better is
    on the page."""
    if not title:
        return None
    loose = numbered = leading = None
    for i, line in enumerate(lines):
        if probe not in line.lower():  # cheap filter before normalising the line
            continue
        key = compact(line)
        if title not in key:
            continue
        if len(key) <= len(title) + 12:
            if key.replace(title, "", 1).isdigit():
                numbered = i if numbered is None else numbered
                continue
            return i
        if key.startswith(title) and leading is None:
            leading = i  # "abbreviate Abbreviate Strings": a title followed by its subtitle
        elif loose is None:
            loose = i
    for found in (leading, numbered, loose):
        if found is not None:
            return found
    return None


# A heading set over more lines than this is not looked for across lines.
_TITLE_SPAN = 3


def _title_span(lines: list[str], title: str, probe: str) -> tuple[int, int] | None:
    """First and last index of the lines that carry `title` (compact form): one line
    (`_title_line`), else a heading set over up to `_TITLE_SPAN` consecutive lines, the first
    opening the title and the last closing it ("Item 7. Management's Discussion and Analysis
    of" / "Financial Condition and Results of Operations")."""
    single = _title_line(lines, title, probe)
    if single is not None:
        return single, single
    if not title:
        return None
    for i, line in enumerate(lines):
        opening = compact(line)
        if not opening or not title.startswith(opening):
            continue
        joined = opening
        for j in range(i + 1, min(len(lines), i + _TITLE_SPAN)):
            joined += compact(lines[j])
            if joined.startswith(title):
                return i, j
            if not title.startswith(joined):
                break
    return None


class _PageLines:
    """Content lines of each page, computed once: neighbouring nodes share pages."""

    def __init__(self, pages: list[str], furniture: frozenset[str]) -> None:
        self.pages = pages
        self.furniture = furniture
        self._lines: dict[int, list[str]] = {}

    def __call__(self, number: int) -> list[str]:
        if number not in self._lines:
            self._lines[number] = content_lines(self.pages[number - 1], self.furniture)
        return self._lines[number]


def title_spans(nodes: list[TreeNode], page_lines: _PageLines) -> list[tuple[int, int] | None]:
    """Where each node's title stands on its start page (first and last line), for nodes in
    reading order. A title is looked for below the previous node's on the same page first, so
    a title a page repeats ("Regulation" above each of its tables) is found at each node's own
    place, not every time at the first."""
    spans: list[tuple[int, int] | None] = []
    page, free = 0, 0  # the page of the last title found, and its first line below that title
    for node in nodes:
        lines = page_lines(node.page_start)
        title, probe = compact(node.title), title_probe(node.title)
        begin = free if node.page_start == page else 0
        span = _title_span(lines[begin:], title, probe)
        if span is not None:
            span = (span[0] + begin, span[1] + begin)
        elif begin:
            span = _title_span(lines, title, probe)
        if span is not None:
            page, free = node.page_start, span[1] + 1
        spans.append(span)
    return spans


def _own_text(node: TreeNode, span: tuple[int, int] | None, stop: TreeNode | None,
              stop_span: tuple[int, int] | None, page_lines: _PageLines) -> str:
    """Text from the node's title (`span`, on its start page) to the next node's title
    (`stop_span`) or the node's end, without page furniture. Short lines without final
    punctuation (headings, labels) become their own paragraphs so they do not glue onto the
    sentence that follows."""
    last = node.page_end
    if stop is not None and node.page_start <= stop.page_start <= node.page_end:
        last = stop.page_start
    parts: list[str] = []
    size = 0
    for number in range(node.page_start, last + 1):
        lines = page_lines(number)
        first, end = 0, len(lines)
        if number == node.page_start and span is not None:
            first = span[1] + 1
        if (stop is not None and stop_span is not None and number == stop.page_start
                and (number > node.page_start or stop_span[0] > 0) and stop_span[0] >= first):
            end = stop_span[0]
        # A contents entry names sections; it says nothing of this one.
        lines = [line for line in lines[first:end] if not DOT_LEADER.search(line)]
        for line in lines:
            previous = parts[-1].rstrip() if parts else ""
            if (
                len(line.split()) <= 6
                and line[-1] not in ".:;,?!)-"
                and (line[0].isupper() or line[0].isdigit())
                and (not previous or previous[-1] in ".:;?!")
            ):
                parts.append(f"\n\n{line}\n\n")
            else:
                parts.append(line)
            size += len(line) + 1
            if size >= _MAX_SOURCE_CHARS:
                return "\n".join(parts)
    return "\n".join(parts)


def _locatable(k: int, nodes: list[TreeNode], spans: list[tuple[int, int] | None]) -> bool:
    """Whether the text of node `k` (nodes in reading order) can be told from its neighbours':
    its title is found on its start page, or the node before it starts on an earlier page. A
    title not found on a page where another section starts would take that section's text."""
    if spans[k] is not None or k == 0:
        return True
    return nodes[k - 1].page_start < nodes[k].page_start


def _candidates(text: str) -> list[str]:
    found: list[str] = []
    for sentence in split_sentences(text):
        if not _WORD.search(sentence):
            continue
        words = len(sentence.split())
        if _MIN_WORDS <= words <= _MAX_WORDS or (words > _MAX_WORDS and not found):
            found.append(sentence if words <= _MAX_WORDS else " ".join(sentence.split()[:_MAX_WORDS]) + " …")
        if len(found) >= _MAX_CANDIDATES:
            break
    return found


def _fallback(text: str) -> str:
    flat = " ".join(text.split())
    if not _WORD.search(flat):
        return ""
    return _shortened(flat, _FALLBACK_CHARS)


def _shortened(text: str, chars: int) -> str:
    """`text` cut at the last whole word within `chars`, marked "…" when cut."""
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + " …"


def _tfidf_weights(sentences: list[str], pages: list[str]) -> list[float]:
    """Per sentence: sum of (1 + log tf) * idf over its distinct words, divided by the square
    root of their number, so long sentences do not win by length alone. idf comes from the
    document's pages (smoothed, as scikit-learn's TfidfVectorizer computes it)."""
    step = max(1, math.ceil(len(pages) / _FIT_PAGES))
    corpus = [p for p in pages[::step] if p.strip()]
    frequency: Counter[str] = Counter()
    for page in corpus:
        frequency.update(set(tokenize(page)))
    total = len(corpus)
    default_idf = math.log((1 + total) / 1) + 1
    idf = {word: math.log((1 + total) / (1 + df)) + 1 for word, df in frequency.items()}
    weights = []
    for sentence in sentences:
        counts = Counter(tokenize(sentence))
        if not counts:
            weights.append(0.0)
            continue
        score = sum((1 + math.log(tf)) * idf.get(word, default_idf) for word, tf in counts.items())
        weights.append(score / math.sqrt(len(counts)))
    return weights


def summarise_tree(
    nodes: list[TreeNode], pages: list[str], furniture: frozenset[str], sentences: int = 3
) -> None:
    """Fill `summary` of every node that has text of its own (in place)."""
    all_nodes = list(walk_tree(nodes))
    # A node's own text stops where the next node in reading order begins.
    following = [*all_nodes[1:], None]
    page_lines = _PageLines(pages, furniture)
    spans = title_spans(all_nodes, page_lines)
    texts = [_own_text(node, span, nxt, next_span, page_lines) if _locatable(k, all_nodes, spans) else ""
             for k, (node, span, nxt, next_span)
             in enumerate(zip(all_nodes, spans, following, [*spans[1:], None], strict=True))]
    candidates = [_candidates(text) for text in texts]
    flat = [s for group in candidates for s in group]
    weights = _tfidf_weights(flat, pages) if flat else []
    position = 0
    for node, text, group in zip(all_nodes, texts, candidates, strict=True):
        scores = weights[position : position + len(group)]
        position += len(group)
        if not group:
            node.summary = _fallback(text) if text.strip() else ""
            continue
        # A slight preference for opening sentences, which usually state what a section is.
        ranked = sorted(
            range(len(group)), key=lambda i: scores[i] * (1.15 if i == 0 else 1.0), reverse=True
        )
        chosen = sorted(ranked[:sentences])
        node.summary = " ".join(group[i] for i in chosen)
    _fill_from_children(nodes, sentences)
    _mark_repeats(all_nodes)


def _mark_repeats(nodes: list[TreeNode]) -> None:
    """A summary word for word an earlier section's (a note restating the business overview,
    an exhibit's second copy, items that all defer to the proxy statement) says where the same
    words stood last before: the page, or the section when it began on this section's page, so
    no two sections read alike in the tree. One shorter than a sentence ("None.", "Not
    applicable.") is all such a section says, and stays as it is. When the note itself would
    repeat an earlier one (a document printing the same sections twice, under the same titles),
    it names the page too."""
    last: dict[str, TreeNode] = {}  # the section each summary stood in last
    given: set[str] = set()  # the notes written so far
    for node in nodes:
        summary = node.summary.strip()
        if not summary:
            continue
        before = last.get(summary)
        if before is not None and len(summary.split()) >= _MIN_WORDS:
            if before.page_start == node.page_start:
                title = _shortened(" ".join(before.title.split()), _CITED_TITLE_CHARS)
                note = f"As under “{title}”: {summary}"
                if note in given:
                    note = f"As under “{title}”, p. {before.page_start}: {summary}"
            else:
                note = f"Also on p. {before.page_start}: {summary}"
            node.summary = note
            given.add(note)
        last[summary] = node


def _fill_from_children(nodes: list[TreeNode], sentences: int) -> None:
    """A parent with no text of its own (title straight followed by its first sub-section) is
    summarised by the opening sentences of its children, or, when only one of them has one,
    by the titles of its children."""
    for node in nodes:
        _fill_from_children(node.children, sentences)
        if node.summary or not node.children:
            continue
        openings = [split_sentences(c.summary)[0] for c in node.children if c.summary]
        if len(openings) >= 2:
            node.summary = " ".join(openings[:sentences])
        else:
            # One child's opening would be that child's summary again: name what it holds.
            node.summary = "Sections: " + "; ".join(" ".join(c.title.split()) for c in node.children[:_LISTED_CHILDREN])
            if len(node.children) > _LISTED_CHILDREN:
                node.summary += "; …"
