"""The tools for agents, as rules over a `DocumentDesk`: what each returns, whichever door (the
gateway's MCP endpoint, `treerag mcp` on a local store) it is called through."""

from __future__ import annotations

from collections.abc import Iterator

from shared.app.verification import SourcePage, answer_confidence
from shared.model.documents import DocumentRecord, DocumentStatus
from shared.model.query import Citation, SentenceCheck, VisitedSection
from shared.model.tools import (
    AskResult,
    CitedSentence,
    DocumentList,
    DocumentSummary,
    DocumentTreeOut,
    PageHit,
    PageSearch,
    PageText,
    TextCheck,
    TreeNodeOut,
)
from shared.model.tree import TreeNode
from shared.ports.desk import DocumentDesk, ToolFailure

SNIPPET_CHARS = 300
SEARCH_PAGES_MAX = 20
CHECKED_PAGES_MAX = 50


def page_label(record: DocumentRecord, page: int) -> str | None:
    labels = record.card.page_labels if record.card is not None else []
    return (labels[page - 1] or None) if 0 < page <= len(labels) else None


def snippet(text: str, words: set[str]) -> str:
    """The part of `text` where the question's words are densest, about `SNIPPET_CHARS` long."""
    text = " ".join(text.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    step = SNIPPET_CHARS // 3
    best, best_hits = 0, -1
    for start in range(0, max(1, len(text) - SNIPPET_CHARS + 1), step):
        window = text[start:start + SNIPPET_CHARS].lower()
        hits = sum(word in window for word in words)
        if hits > best_hits:
            best, best_hits = start, hits
    return ("…" if best else "") + text[best:best + SNIPPET_CHARS].strip() + "…"


async def ask(desk: DocumentDesk, question: str, doc_ids: list[str]) -> AskResult:
    outcome = await desk.answer(question, doc_ids)
    answer = outcome.answer
    records = {doc_id: await desk.document(doc_id) for doc_id in {c.doc_id for c in answer.citations}}
    sentences = [cited_sentence(desk, check, records) for check in answer.sentences]
    return AskResult(question=question, answer=answer.answer, abstained=answer.abstained,
                     confidence=answer.confidence, sentences=sentences, citations=answer.citations,
                     warnings=outcome.warnings)


def cited_sentence(desk: DocumentDesk, check: SentenceCheck, records: dict[str, DocumentRecord]) -> CitedSentence:
    citation = check.citation
    if citation is None or not citation.pages:
        return CitedSentence(text=check.text, verdict=check.verdict, reason=check.reason)
    window = check.window
    page = window.page if window is not None and window.page else citation.pages[0]
    record = records.get(citation.doc_id)
    return CitedSentence(
        text=check.text, verdict=check.verdict, reason=check.reason, doc_id=citation.doc_id,
        file_name=citation.file_name, page=page, page_label=page_label(record, page) if record else None,
        section=citation.node_id or None, evidence=window.text if window else None,
        evidence_start=window.start if window else None, evidence_end=window.end if window else None,
        page_image=desk.page_image(citation.doc_id, page),
    )


async def search_pages(desk: DocumentDesk, question: str, doc_ids: list[str], limit: int) -> PageSearch:
    """The pages the navigator keeps as evidence for `question`, cited ones first, each with the
    snippet where the question's words are."""
    outcome = await desk.answer(question, doc_ids)
    wanted = list(dict.fromkeys(_ranked_pages(outcome.answer.citations, outcome.path)))[:min(limit, SEARCH_PAGES_MAX)]
    words = {w for w in question.lower().split() if len(w) > 3}
    hits: list[PageHit] = []
    for doc_id, page, section in wanted:
        record = await desk.document(doc_id)
        texts = await desk.page_texts(doc_id, [page])
        if page in texts:
            hits.append(PageHit(doc_id=doc_id, file_name=record.file_name, page=page,
                                page_label=page_label(record, page), section=section,
                                snippet=snippet(texts[page], words)))
    return PageSearch(question=question, pages=hits)


def _ranked_pages(citations: list[Citation], path: list[VisitedSection]) -> Iterator[tuple[str, int, str]]:
    for citation in citations:
        for page in citation.pages:
            yield citation.doc_id, page, citation.node_id
    for section in path:
        if section.selected:
            for page in range(section.page_start, section.page_end + 1):
                yield section.doc_id, page, section.node_id


async def cited_sources(desk: DocumentDesk, citations: list[Citation]) -> list[SourcePage]:
    """The pages `citations` name, each of a ready document the caller has; `ToolFailure` naming
    the first that is not."""
    sources: list[SourcePage] = []
    for citation in citations:
        record = await desk.document(citation.doc_id)
        if record.status != DocumentStatus.READY:
            raise ToolFailure(f"document {record.doc_id} is {record.status.value}: it has no pages to check")
        texts = await desk.page_texts(record.doc_id, sorted(set(citation.pages)))
        missing = sorted(set(citation.pages) - set(texts))
        if missing:
            raise ToolFailure(f"document {record.doc_id} has no page {missing[0]}: it has pages 1 to "
                              f"{record.page_count}")
        sources.extend(SourcePage(record.doc_id, page, text) for page, text in sorted(texts.items()))
    return sources


async def verify(desk: DocumentDesk, text: str, citations: list[Citation]) -> TextCheck:
    if sum(len(c.pages) for c in citations) > CHECKED_PAGES_MAX:
        raise ToolFailure(f"cite at most {CHECKED_PAGES_MAX} pages in one check")
    checks = await desk.check(text, await cited_sources(desk, citations))
    counts = {v: sum(c.verdict == v for c in checks) for v in ("supported", "contradicted", "unsupported")}
    return TextCheck(sentences=checks, confidence=answer_confidence(checks), **counts)


async def get_page(desk: DocumentDesk, doc_id: str, page: int) -> PageText:
    record = await desk.document(doc_id)
    texts = await desk.page_texts(record.doc_id, [page])
    if page not in texts:
        raise ToolFailure(f"document {record.doc_id} has no page {page}: it has pages 1 to {record.page_count}")
    return PageText(doc_id=record.doc_id, file_name=record.file_name, page=page,
                    page_label=page_label(record, page), text=texts[page])


async def get_tree(desk: DocumentDesk, doc_id: str) -> DocumentTreeOut:
    record = await desk.document(doc_id)
    tree = await desk.tree(record.doc_id)
    if tree is None:
        raise ToolFailure(f"document {record.doc_id} has no tree yet (it is {record.status.value}); try again later")
    return DocumentTreeOut(doc_id=record.doc_id, file_name=record.file_name, nodes=list(_flat(tree.nodes)))


def _flat(nodes: list[TreeNode]) -> Iterator[TreeNodeOut]:
    for node in nodes:
        yield TreeNodeOut(node_id=node.id, title=node.title, level=node.level, page_start=node.page_start,
                          page_end=node.page_end, summary=node.summary)
        yield from _flat(node.children)


async def list_documents(desk: DocumentDesk) -> DocumentList:
    return DocumentList(documents=[
        DocumentSummary(doc_id=r.doc_id, file_name=r.file_name, status=r.status.value, page_count=r.page_count,
                        card=r.card)
        for r in await desk.documents()
    ])
