"""Section tree from a language model: few calls, every page number checked against the text.

Pages go to the model in chunks of at most 100 (each page tagged with its physical number);
the model lists the headings it sees as a flat list (title, level, start page). The builder then
locates every title in the page text itself: the page the model gave, ±1, then the rest of the
document; a title found nowhere keeps the model's (clamped) page and stays unverified. Summaries
come afterwards, many nodes per call.
"""

from __future__ import annotations

import contextvars
import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import BaseModel, Field

from services.indexer.furniture import content_lines, find_furniture
from services.indexer.nesting import Heading, assign_ids, cover_children, nest
from services.indexer.outline import opens_page
from shared.adapters.llm.client import LLMClient
from shared.adapters.llm.errors import LLMError
from shared.adapters.logs import log_fields
from shared.model.tree import TreeNode, walk_tree
from shared.text.normalize import compact, title_key

logger = logging.getLogger(__name__)

PROMPT_VERSION = "tree-v1"
MAX_PAGES_PER_CHUNK = 100
# How many characters of page text a token holds, about (English prose, common tokenizers).
CHARS_PER_TOKEN = 4
MAX_LEVEL = 4

DOMAIN_GUIDANCE: dict[str, str] = {
    "general": (
        "Typical headings: numbered chapters and sections (\"2\", \"2.1\", \"2.1.3\"), titled parts, "
        "appendices."
    ),
    "medical": (
        "Typical headings: clinical sections such as Indications, Dosage and Administration, "
        "Contraindications, Warnings and Precautions, Adverse Reactions, Clinical Studies, "
        "Methods, Results, Discussion; guideline recommendations and their numbered subsections."
    ),
    "legal": (
        "Typical headings: Parts, Chapters, Articles, Sections, Clauses and Schedules "
        "(\"Article 5\", \"Section 12(a)\", \"Schedule 2\"), definitions, recitals. Each Article or "
        "Section heading is a section; numbered sub-clauses inside one are not."
    ),
    "financial": (
        "Typical headings: the Items of an annual or quarterly report (\"Item 1. Business\", "
        "\"Item 1A. Risk Factors\", \"Item 7. Management's Discussion and Analysis\"), financial "
        "statements, Notes to the financial statements (\"Note 3 - Revenue\"), segment results."
    ),
    "academic": (
        "Typical headings: Abstract, Introduction, Related Work, Method(s), Experiments, Results, "
        "Discussion, Conclusion, References, Appendix, with their numbered subsections."
    ),
}
DOMAINS = tuple(DOMAIN_GUIDANCE)


class LLMTreeError(Exception):
    """The model could not produce a usable tree; the caller falls back to the offline builder."""


class TocEntry(BaseModel):
    title: str = Field(description="The heading exactly as printed, with its number if it has one.")
    level: int = Field(description="1 for top-level sections, 2 for their subsections, and so on.")
    start_page: int = Field(description="The N of the <page N> tag of the page on which the heading is printed.")


class TocChunk(BaseModel):
    sections: list[TocEntry]


class NodeSummary(BaseModel):
    id: str
    summary: str


class SummaryBatch(BaseModel):
    summaries: list[NodeSummary]


@dataclass(frozen=True)
class TreeOptions:
    max_pages_per_chunk: int = MAX_PAGES_PER_CHUNK
    max_chars_per_chunk: int = 240_000  # ~60k tokens; lower it for small local context windows
    max_chars_per_page: int = 4_000
    summaries: bool = True
    summary_excerpt_chars: int = 1_200
    max_nodes_per_summary_call: int = 40
    max_chars_per_summary_call: int = 48_000
    summary_threads: int = 4

    @classmethod
    def for_context(cls, context_tokens: int | None, **changes: object) -> TreeOptions:
        """Options whose calls fit a model's context window of `context_tokens` (the defaults
        when None): a quarter of the window carries pages, at about four characters a token
        (figures and tables take more tokens a character than prose); the rest is the
        instructions and the schema, the headings found so far and the reply."""
        if context_tokens is None:
            return cls(**changes)  # type: ignore[arg-type]
        chars = context_tokens * CHARS_PER_TOKEN // 4
        return cls(**{"max_chars_per_chunk": chars, "max_chars_per_page": min(4_000, chars // 2),
                      "max_chars_per_summary_call": chars, "summary_excerpt_chars": min(1_200, chars // 8),
                      **changes})  # type: ignore[arg-type]


def page_chunks(pages: Sequence[str], options: TreeOptions) -> list[tuple[int, int]]:
    """Consecutive 1-based inclusive page ranges, each within the page and character limits."""
    limit = min(options.max_pages_per_chunk, MAX_PAGES_PER_CHUNK)
    chunks: list[tuple[int, int]] = []
    start, chars = 1, 0
    for number, text in enumerate(pages, start=1):
        size = min(len(text), options.max_chars_per_page) + 20
        if number > start and (number - start >= limit or chars + size > options.max_chars_per_chunk):
            chunks.append((start, number - 1))
            start, chars = number, 0
        chars += size
    if pages:
        chunks.append((start, len(pages)))
    return chunks


def _structure_prompt(
    page_texts: list[str], first: int, last: int, total: int, domain: str, earlier: list[Heading], cap: int
) -> str:
    tagged = "\n".join(
        f"<page {n}>\n{page_texts[n - 1][:cap]}\n</page {n}>" for n in range(first, last + 1)
    )
    context = ""
    if earlier:
        listed = "\n".join(f"- level {h.level}: {h.title} (page {h.page})" for h in earlier[-8:])
        context = (
            f"\nHeadings already found on earlier pages (continue with consistent levels; do not "
            f"repeat them unless printed again as a new heading):\n{listed}\n"
        )
    return (
        f"You are building the table of contents of a {domain} document of {total} pages.\n"
        f"Below are pages {first} to {last}, each wrapped in <page N> ... </page N> where N is the "
        f"physical page number.\n{DOMAIN_GUIDANCE[domain]}\n"
        "List every section heading that is printed on these pages, in reading order.\n"
        "Rules:\n"
        "- title: copy the heading text exactly as printed (keep its number, e.g. \"3.2 Results\").\n"
        f"- level: 1 for top-level sections, 2 for subsections, up to {MAX_LEVEL}.\n"
        "- start_page: the N of the <page N> tag where the heading is printed, not a page number "
        "printed in the text or listed in a table of contents.\n"
        "- Skip running headers and footers, figure and table captions, and the lines of a printed "
        "table of contents.\n"
        f"{context}\n{tagged}\n\n"
        'Answer as JSON: {"sections": [{"title": "...", "level": 1, "start_page": N}, ...]}'
    )


# Section numbering in front of a title ("2.1", "IV.", "Chapter 3", "Article 12", "A."); models
# often drop it or add it, so titles are compared without it.
_NUMBERING = re.compile(
    r"^(?:(?:chapter|section|part|appendix|annex|article|item|schedule|note|제|第)\s*)?"
    r"(?:\d+(?:\.\d+)*|[ivxlc]+|[a-z])(?:\s|$)"
)
# A line this much longer than the title is prose that mentions it, not the heading itself.
_HEADING_SLACK = 12


def _forms(text: str) -> tuple[str, str]:
    """(full, bare) comparable forms of a heading: spaces, punctuation and hyphens (line-break
    hyphens included) removed; `bare` also without the leading numbering."""
    key = title_key(text)
    full = compact(key)
    return full, compact(_NUMBERING.sub("", key, count=1)) or full


class _PageIndex:
    """Heading-comparable forms of each page's content lines (running headers and footers
    excluded)."""

    def __init__(self, pages: Sequence[str]) -> None:
        self.pages = pages
        self.furniture = find_furniture(list(pages))
        self.lines: list[list[tuple[str, str]]] = []
        self.text: list[str] = []
        for page in pages:
            lines = content_lines(page, self.furniture)
            # A heading may wrap onto a second line: also try each line joined with the next.
            joined = lines + [f"{a} {b}" for a, b in zip(lines, lines[1:], strict=False)]
            self.lines.append([f for f in (_forms(line) for line in joined) if f[0]])
            self.text.append(compact(" ".join(lines)))

    def holds(self, title: str, page: int, tier: str) -> bool:
        """Whether `page` prints the title as a heading, by tier of evidence:
        "numbered" a line is the title with its numbering; "heading" a line is the title, give
        or take numbering and a few characters; "mention" a line starts with the title (run-in
        headings), or a long title appears anywhere."""
        if not 1 <= page <= len(self.lines):
            return False
        full, bare = _forms(title)
        if not full:
            return False
        lines = self.lines[page - 1]
        if tier == "numbered":
            return full != bare and any(f.startswith(full) and len(f) <= len(full) + _HEADING_SLACK for f, _ in lines)
        if tier == "heading":
            return any(b.startswith(bare) and len(b) <= len(bare) + _HEADING_SLACK for _, b in lines)
        if any(b.startswith(bare) for _, b in lines):
            return True
        words = title_key(title).split()
        # Long titles are distinctive anywhere. Models shorten them (the first words remain) or
        # prefix a running header to them (the last words remain).
        text = self.text[page - 1]
        return len(words) >= 5 and (compact(" ".join(words[:6])) in text or compact(" ".join(words[-5:])) in text)

    def locate(self, title: str, hint: int, not_before: int) -> int | None:
        """The page printing `title`: the model's page or a neighbour, strongest evidence first;
        else the nearest page printing it as a heading. An occurrence before the previous
        heading (a table of contents, a cross-reference) is taken only when there is no other.
        None when the title is on no page."""
        total = len(self.lines)
        hint = min(max(hint, 1), total)
        near = [p for p in (hint, hint - 1, hint + 1) if 1 <= p <= total]
        fallback: int | None = None
        for tier in ("numbered", "heading", "mention"):
            for page in near:
                if self.holds(title, page, tier):
                    if page >= not_before:
                        return page
                    fallback = fallback or page
        for distance in range(2, total):
            for page in (hint - distance, hint + distance):
                if self.holds(title, page, "numbered") or self.holds(title, page, "heading"):
                    if page >= not_before:
                        return page
                    fallback = fallback or page
        return fallback


@dataclass
class _Located:
    heading: Heading
    verified: bool
    from_model: bool = True


def _ask_structure(
    llm: LLMClient, index: _PageIndex, domain: str, options: TreeOptions
) -> list[_Located]:
    total = len(index.pages)
    cleaned = ["\n".join(content_lines(p, index.furniture)) for p in index.pages]
    located: list[_Located] = []
    for first, last in page_chunks(cleaned, options):
        prompt = _structure_prompt(
            cleaned, first, last, total, domain, [x.heading for x in located], options.max_chars_per_page
        )
        reply = llm.generate_json(prompt, TocChunk, purpose="tree")
        not_before = located[-1].heading.page if located else 1
        for entry in reply.sections:
            title = " ".join(entry.title.split())
            if not title:
                continue
            level = min(max(entry.level, 1), MAX_LEVEL)
            page = index.locate(title, entry.start_page, not_before)
            verified = page is not None
            if page is None:
                page = min(max(entry.start_page, first), last)
            if located and _same_heading(located[-1].heading, title, page):
                continue  # repeated across a chunk boundary
            located.append(_Located(Heading(level=level, title=title, page=page), verified))
            if verified:
                not_before = page
        logger.info(
            "model structure chunk",
            extra=log_fields(first_page=first, last_page=last, headings=len(reply.sections)),
        )
    return located


def _same_heading(previous: Heading, title: str, page: int) -> bool:
    return title_key(previous.title) == title_key(title) and abs(previous.page - page) <= 1


def _front_matter(index: _PageIndex, first_page: int) -> _Located | None:
    """Pages before the first heading stay reachable, under a node named by page 1's first line."""
    if first_page <= 1:
        return None
    lines = content_lines(index.pages[0], index.furniture) or [ln.strip() for ln in index.pages[0].splitlines() if ln.strip()]
    title = " ".join(lines[0].split()[:16]) if lines else "Front matter"
    return _Located(Heading(level=1, title=title, page=1), verified=bool(lines), from_model=False)


def _excerpt(node: TreeNode, pages: Sequence[str], chars: int) -> str:
    text = "\n".join(pages[p - 1] for p in node.pages if p - 1 < len(pages))
    flat = " ".join(text.split())
    # Start at the heading, so the excerpt is the section's own opening rather than the tail
    # of the previous section on a shared page.
    position = flat.lower().find(" ".join(node.title.split()).lower()[:40]) if node.title else -1
    return flat[max(position, 0):][:chars]


def _summary_prompt(batch: list[tuple[TreeNode, str]], domain: str) -> str:
    sections = "\n".join(
        f'<section id="{node.id}" title="{node.title}" pages="{node.page_start}-{node.page_end}">\n'
        f"{excerpt}\n</section>"
        for node, excerpt in batch
    )
    return (
        f"Summarise each section of a {domain} document in one or two sentences (at most 40 words): "
        "what it covers, with its key terms and figures, in the language of the excerpt. Use only "
        "the excerpt given for the section.\n\n"
        f"{sections}\n\n"
        'Answer as JSON: {"summaries": [{"id": "<section id>", "summary": "..."}, ...]} with one '
        "entry per section."
    )


def _summary_batches(items: list[tuple[TreeNode, str]], options: TreeOptions) -> list[list[tuple[TreeNode, str]]]:
    batches: list[list[tuple[TreeNode, str]]] = []
    current: list[tuple[TreeNode, str]] = []
    chars = 0
    for item in items:
        size = len(item[1]) + len(item[0].title) + 60
        if current and (len(current) >= options.max_nodes_per_summary_call or chars + size > options.max_chars_per_summary_call):
            batches.append(current)
            current, chars = [], 0
        current.append(item)
        chars += size
    if current:
        batches.append(current)
    return batches


def summarize_nodes(
    nodes: list[TreeNode],
    pages: Sequence[str],
    llm: LLMClient,
    domain: str = "general",
    options: TreeOptions | None = None,
) -> int:
    """Fill node summaries in place, many nodes per call; returns how many the model wrote.

    A node the model skipped keeps an extractive summary (its opening words). Raises LLMError
    when a batch fails.
    """
    options = options or TreeOptions()
    items = [(node, _excerpt(node, pages, options.summary_excerpt_chars)) for node in walk_tree(nodes)]
    batches = _summary_batches(items, options)

    def run(batch: list[tuple[TreeNode, str]]) -> dict[str, str]:
        reply = llm.generate_json(_summary_prompt(batch, domain), SummaryBatch, purpose="summaries")
        return {s.id.strip(): " ".join(s.summary.split()) for s in reply.summaries}

    with ThreadPoolExecutor(max_workers=max(1, min(options.summary_threads, len(batches) or 1))) as pool:
        # Each call in a copy of this thread's context: the documents its prompt is made from go with it.
        futures = [pool.submit(contextvars.copy_context().run, run, batch) for batch in batches]
        results = [future.result() for future in futures]
    written = {k: v for result in results for k, v in result.items() if v}
    for node, excerpt in items:
        if node.id in written:
            node.summary = written[node.id]
        elif not node.summary:
            node.summary = excerpt[:200]
    return sum(1 for node, _ in items if node.id in written)


def build_llm_tree(
    pages: list[str],
    llm: LLMClient,
    domain: str = "general",
    *,
    options: TreeOptions | None = None,
    warnings: list[str] | None = None,
) -> list[TreeNode]:
    """Top-level nodes of the document's tree, built by `llm` from the page text.

    `pages[0]` is physical page 1. Page references are located in the text (±1, then anywhere);
    `verified` says whether the title was found on the node's start page. Summary failures keep
    the tree (with extractive summaries) and add a line to `warnings`; structure failures raise
    `LLMTreeError`.
    """
    if domain not in DOMAIN_GUIDANCE:
        raise ValueError(f"unknown domain template {domain!r}; choose one of {', '.join(DOMAINS)}")
    if not any(p.strip() for p in pages):
        raise LLMTreeError("the PDF has no extractable text for the model to read (scanned pages need OCR first)")
    options = options or TreeOptions()
    index = _PageIndex(pages)
    try:
        located = _ask_structure(llm, index, domain, options)
    except LLMError as exc:
        raise LLMTreeError(f"the model could not list the sections: {exc}") from exc
    if not located:
        raise LLMTreeError("the model found no section headings")
    located.sort(key=lambda x: x.heading.page)  # stable: reading order within a page is kept
    front = _front_matter(index, located[0].heading.page)
    if front is not None:
        located.insert(0, front)
    for item in located:
        item.heading.opens_page = opens_page(item.heading.title, pages[item.heading.page - 1], index.furniture, None)
    roots = nest([x.heading for x in located], len(pages))
    cover_children(roots)
    assign_ids(roots)
    for node, item in zip(walk_tree(roots), located, strict=True):
        node.verified = item.verified
    unverified = sum(1 for x in located if x.from_model and not x.verified)
    if unverified:
        message = f"{unverified} of {sum(x.from_model for x in located)} model headings were not found in the page text and are marked unverified"
        logger.warning(message)
        if warnings is not None:
            warnings.append(message)
    if options.summaries:
        try:
            summarize_nodes(roots, pages, llm, domain, options)
        except LLMError as exc:
            message = f"model summaries failed, extractive summaries kept: {exc}"
            logger.warning(message)
            if warnings is not None:
                warnings.append(message)
            for node in walk_tree(roots):
                if not node.summary:
                    node.summary = _excerpt(node, pages, 200)
    return roots
