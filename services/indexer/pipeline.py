"""Indexing one PDF: bytes in, verified section tree plus full page text out.

Pure: no storage, no transport. The CLI and the indexer service both call `index_pdf`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from services.indexer.extract import (
    PdfContent,
    extract_content,
    has_outline,
    open_document,
)
from services.indexer.furniture import content_lines, find_furniture
from services.indexer.layout import build_layout_tree
from services.indexer.nesting import assign_ids, relevel
from services.indexer.outline import build_outline_tree, usable_outline
from services.indexer.summaries import summarise_tree
from services.indexer.verify import verify_tree
from services.indexer.windows import build_windows, split_long_leaves
from shared.adapters.embeddings.document import embed_document
from shared.adapters.logs import log_fields
from shared.model.documents import (
    BuilderName,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.ids import BuilderChoice, content_id
from shared.model.tree import TreeNode, count_nodes
from shared.ports.model_roles import Embedder

logger = logging.getLogger(__name__)

# A page with fewer characters than this has no usable text layer.
_MIN_PAGE_CHARS = 20
# Below this share of pages with text, the PDF is treated as scanned (image-only).
_MIN_TEXT_SHARE = 0.1


class IndexOptions(BaseModel):
    builder: BuilderChoice = Field(
        default="auto",
        description="auto: outline if the PDF has one, else the LLM when one is given, else layout.",
    )
    max_pages: int = Field(default=10_000, ge=1, description="Larger PDFs are refused.")
    window_pages: int = Field(default=5, ge=1, description="Pages per window of the windows tree.")
    max_leaf_pages: int = Field(default=10, ge=1, description="Longer leaves are split further.")
    summary_sentences: int = Field(default=3, ge=0, le=10)
    domain: str = Field(default="general", description="Template hint for the LLM builder.")


def _text_warning(pages: list[str]) -> tuple[bool, str | None]:
    """(image_only, warning) from how many pages carry a text layer."""
    empty = [i + 1 for i, page in enumerate(pages) if len(page.strip()) < _MIN_PAGE_CHARS]
    with_text = len(pages) - len(empty)
    if with_text <= _MIN_TEXT_SHARE * len(pages):
        return True, (
            f"no text layer on {len(empty)} of {len(pages)} pages (scanned or image-only PDF): "
            "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`) and index the result; "
            "built page windows only"
        )
    if len(empty) > 0.25 * len(pages):
        return False, (
            f"{len(empty)} of {len(pages)} pages have no text layer; OCR them for full coverage"
        )
    return False, None


def _llm_tree(pages: list[str], llm: object, domain: str, warnings: list[str]) -> list[TreeNode]:
    from services.indexer.llm_tree import (  # loaded only when used
        TreeOptions,
        build_llm_tree,
    )

    # Summaries come later, once the tree is verified and split, so split leaves get them too.
    nodes = build_llm_tree(pages, llm, domain, options=TreeOptions(summaries=False), warnings=warnings)
    if not nodes:
        raise ValueError("the model returned no sections")
    return [n if isinstance(n, TreeNode) else TreeNode.model_validate(n) for n in nodes]


def _llm_summaries(
    nodes: list[TreeNode], pages: list[str], llm: object, domain: str, warnings: list[str]
) -> None:
    """Replace extractive summaries with the model's, in batches; keep them when it fails."""
    from services.indexer.llm_tree import summarize_nodes
    from shared.adapters.llm.errors import LLMError

    try:
        summarize_nodes(nodes, pages, llm, domain)
    except LLMError as exc:
        warnings.append(f"model summaries failed ({exc}); kept extractive summaries")


_FILE_LIKE_TITLE = re.compile(r"\.(dvi|docx?|pptx?|xlsx?|rtf|tex|indd|qxd|pdf)$|^microsoft (word|powerpoint) - |^untitled", re.I)


def _document_title(content: PdfContent, furniture: frozenset[str], file_name: str) -> str:
    """The largest text on the first page, else the metadata title when it reads like one,
    else the first line of the first page, else the file name."""
    if content.cover_title:
        return content.cover_title
    meta = content.metadata_title
    if sum(ch.isalpha() for ch in meta) >= 3 and not _FILE_LIKE_TITLE.search(meta):
        return meta
    first = content_lines(content.pages[0], furniture)[:1]
    return first[0][:120] if first else Path(file_name).stem


def index_pdf(
    data: bytes,
    file_name: str,
    options: IndexOptions | None = None,
    llm: object | None = None,
    progress: Callable[[int], None] | None = None,
    embedder: Embedder | None = None,
    doc_id: str | None = None,
) -> IndexedDocument:
    """Index one PDF. `progress(n)` is called as pages are read, with n new pages each time.
    With an `embedder`, every page and every node (title + summary) also gets a vector.
    `doc_id`: the id to store it under (a tenant's id, `document_id`); default the content hash.

    Raises a services.indexer.errors.PdfError subclass when the file cannot be indexed.
    """
    options = options or IndexOptions()
    started = time.perf_counter()
    doc_id = doc_id or content_id(data)
    warnings: list[str] = []

    pdf = open_document(data, options.max_pages)
    try:
        wants_outline = options.builder in ("auto", "outline")
        expects_outline = wants_outline and has_outline(pdf)
        needs_layout = options.builder != "windows" and not expects_outline
        content = extract_content(pdf, with_layout=needs_layout, progress=progress)
        outline = usable_outline(content.outline) if wants_outline else []
        if expects_outline and not outline and options.builder != "windows":
            # Bookmarks without page targets: read the layout after all.
            content = extract_content(pdf, with_layout=True)
    finally:
        pdf.close()
    if options.builder == "outline" and not outline:
        warnings.append("the PDF has no usable outline (bookmarks); built the tree from its layout")

    pages = content.pages
    if content.unreadable_pages:
        warnings.append(
            f"{len(content.unreadable_pages)} page(s) could not be read and are empty: "
            f"{content.unreadable_pages[:10]}"
        )
    image_only, text_warning = _text_warning(pages)
    if text_warning:
        warnings.append(text_warning)
    furniture = find_furniture(pages)

    nodes: list[TreeNode] = []
    builder = BuilderName.WINDOWS
    if image_only or options.builder == "windows":
        pass
    elif outline:
        nodes, builder = build_outline_tree(outline, pages, furniture), BuilderName.OUTLINE
    else:
        if options.builder == "llm" or (options.builder == "auto" and llm is not None):
            if llm is None:
                warnings.append("the llm builder needs a configured model (TREERAG_LLM); built the tree offline")
            else:
                try:
                    nodes, builder = _llm_tree(pages, llm, options.domain, warnings), BuilderName.LLM
                except Exception as exc:  # any model failure falls back to the offline tree
                    logger.warning("llm tree failed", extra=log_fields(doc_id=doc_id, error=str(exc)))
                    warnings.append(f"the LLM tree failed ({type(exc).__name__}: {exc}); built the tree offline")
        if not nodes and content.layouts is not None:
            nodes = build_layout_tree(content.layouts, furniture, content.styles_reliable)
            builder = BuilderName.LAYOUT
            if not nodes:
                warnings.append("no headings found in the page layout; built page windows")
    if not nodes:
        builder = BuilderName.WINDOWS
        nodes = build_windows(pages, furniture, options.window_pages)

    first_start = min(n.page_start for n in nodes)
    if first_start > 1:
        # Title page, contents, preface before the first section: reachable like any section.
        nodes.insert(0, *build_windows(pages, furniture, first_start - 1, 1, first_start - 1))
    split_long_leaves(
        nodes, pages, furniture, options.max_leaf_pages, options.window_pages,
        content.layouts if builder is not BuilderName.WINDOWS else None, content.styles_reliable,
    )
    nodes = verify_tree(nodes, pages)
    relevel(nodes)
    assign_ids(nodes)
    if options.summary_sentences:
        summarise_tree(nodes, pages, furniture, options.summary_sentences)
    if builder is BuilderName.LLM:
        _llm_summaries(nodes, pages, llm, options.domain, warnings)
    embeddings = embed_document(doc_id, pages, nodes, embedder) if embedder is not None else None

    elapsed = time.perf_counter() - started
    record = DocumentRecord(
        doc_id=doc_id,
        file_name=Path(file_name).name,
        title=_document_title(content, furniture, file_name),
        page_count=content.page_count,
        builder=builder,
        build_seconds=round(elapsed, 3),
        warnings=warnings,
        status=DocumentStatus.READY,
    )
    logger.info(
        "indexed",
        extra=log_fields(
            doc_id=doc_id, pages=content.page_count, builder=builder.value,
            nodes=count_nodes(nodes), seconds=round(elapsed, 3), warnings=len(warnings),
        ),
    )
    return IndexedDocument(
        record=record, pages=pages, tree=DocumentTree(doc_id=doc_id, nodes=nodes), embeddings=embeddings
    )
