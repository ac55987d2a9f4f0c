"""Indexing one document: bytes in, verified section tree plus full page text out.

Pure: no storage, no transport. The CLI and the indexer service both call `index_document`
(PDFs, and DOCX, HTML, Markdown and text files, which get pages of their own).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from services.indexer.card import card_of_content
from services.indexer.errors import NotAPdfError, TooManyPartsError, UnsupportedFormatError
from services.indexer.extract import (
    OutlineEntry,
    PdfContent,
    extract_content,
    has_outline,
    has_text,
    open_document,
)
from services.indexer.formats import read_text_document
from services.indexer.formats.paginate import paginate
from services.indexer.furniture import find_furniture
from services.indexer.layout import build_layout_tree
from services.indexer.nesting import assign_ids, relevel
from services.indexer.ocr import OcrNotInstalledError, TesseractOcr, make_ocr
from services.indexer.outline import build_outline_tree, usable_outline
from services.indexer.summaries import summarise_tree
from services.indexer.verify import verify_tree
from services.indexer.windows import build_windows, split_long_leaves
from shared.adapters.embeddings.document import embed_document
from shared.adapters.logs import log_fields
from shared.model.card import DocumentCard
from shared.model.documents import (
    BuilderName,
    DocumentRecord,
    DocumentStatus,
    DocumentTree,
    IndexedDocument,
)
from shared.model.formats import FORMAT_NAMES, DocumentFormat, sniff_format
from shared.model.ids import BuilderChoice, content_id
from shared.model.tree import TreeNode, count_nodes, walk_tree
from shared.ports.model_calls import made_from
from shared.ports.model_roles import Embedder
from shared.text.page_analysis import analyse_pages

if TYPE_CHECKING:  # the model adapters load only when a model is configured
    from shared.adapters.llm.client import LLMClient

logger = logging.getLogger(__name__)

OcrMode = Literal["auto", "off"]
# What became of pages without a text layer: OCR switched off, not installed, or run.
OcrState = Literal["off", "missing", "ran"]

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
    ocr: OcrMode = Field(default="auto", description="auto: recognise pages without a text layer (Tesseract).")
    ocr_languages: str = Field(default="eng", description="Tesseract languages, e.g. 'eng+deu'.")
    ocr_workers: int = Field(default=0, ge=0, description="Pages recognised at once; 0: one per core.")


def _text_warning(pages: list[str], ocr: OcrState) -> tuple[bool, str | None]:
    """(image_only, warning) from how many pages carry text (after OCR, when it ran)."""
    empty = [i + 1 for i, page in enumerate(pages) if not has_text(page)]
    with_text = len(pages) - len(empty)
    how = {
        "off": "run OCR first (e.g. `ocrmypdf in.pdf out.pdf`) and index the result, or set TREERAG_OCR=auto",
        "missing": "no OCR engine is installed: install Debian's tesseract-ocr (`make ocr`) and index it again",
        "ran": "OCR found no text on them either (blank pages, pictures, or a script other than "
        "TREERAG_OCR_LANGUAGES)",
    }[ocr]
    if with_text <= _MIN_TEXT_SHARE * len(pages):
        return True, (
            f"no text layer on {len(empty)} of {len(pages)} pages (scanned or image-only PDF): "
            f"{how}; built page windows only"
        )
    if len(empty) > 0.25 * len(pages):
        return False, f"{len(empty)} of {len(pages)} pages have no text; {how}"
    return False, None


def _llm_tree(pages: list[str], llm: LLMClient, domain: str, warnings: list[str]) -> list[TreeNode]:
    from services.indexer.llm_tree import (  # loaded only when used
        TreeOptions,
        build_llm_tree,
    )

    # Summaries come later, once the tree is verified and split, so split leaves get them too.
    options = TreeOptions.for_context(llm.context_tokens, summaries=False)
    nodes = build_llm_tree(pages, llm, domain, options=options, warnings=warnings)
    if not nodes:
        raise ValueError("the model returned no sections")
    return [n if isinstance(n, TreeNode) else TreeNode.model_validate(n) for n in nodes]


def _llm_summaries(
    nodes: list[TreeNode], pages: list[str], llm: LLMClient, domain: str, warnings: list[str]
) -> None:
    """Replace extractive summaries with the model's, in batches; keep them when it fails."""
    from services.indexer.llm_tree import TreeOptions, summarize_nodes
    from shared.adapters.llm.errors import LLMError

    try:
        summarize_nodes(nodes, pages, llm, domain, TreeOptions.for_context(llm.context_tokens))
    except LLMError as exc:
        warnings.append(f"model summaries failed ({exc}); kept extractive summaries")


def _card(content: PdfContent, furniture: frozenset[str], file_name: str, doc_id: str) -> DocumentCard:
    started = time.perf_counter()
    card = card_of_content(content, furniture, file_name)
    logger.debug(
        "card built",
        extra=log_fields(doc_id=doc_id, doc_type=card.doc_type.value, ms=round((time.perf_counter() - started) * 1000, 2)),
    )
    return card


def _ocr_engine(options: IndexOptions) -> TesseractOcr | None:
    try:
        return make_ocr(options.ocr, options.ocr_languages, options.ocr_workers)
    except OcrNotInstalledError as exc:
        # Said only when a page needs it (see _text_warning); text PDFs index as before.
        logger.info("OCR unavailable", extra=log_fields(reason=str(exc)))
        return None


def _read_pdf(
    data: bytes, options: IndexOptions, progress: Callable[[int], object] | None, warnings: list[str]
) -> tuple[PdfContent, list[OutlineEntry], bool]:
    """(content, usable outline, image_only) of a PDF; OCR'd pages count as pages with text."""
    ocr = _ocr_engine(options)
    pdf = open_document(data, options.max_pages)
    try:
        wants_outline = options.builder in ("auto", "outline")
        expects_outline = wants_outline and has_outline(pdf)
        needs_layout = options.builder != "windows" and not expects_outline
        content = extract_content(pdf, with_layout=needs_layout, progress=progress, ocr=ocr)
        outline = usable_outline(content.outline) if wants_outline else []
        if expects_outline and not outline and options.builder != "windows":
            # Bookmarks without page targets: read the layout after all.
            content = extract_content(pdf, with_layout=True, ocr=ocr)
    finally:
        pdf.close()
    if options.builder == "outline" and not outline:
        warnings.append("the PDF has no usable outline (bookmarks); built the tree from its layout")
    if content.unreadable_pages:
        warnings.append(
            f"{len(content.unreadable_pages)} page(s) could not be read and are empty: "
            f"{content.unreadable_pages[:10]}"
        )
    if content.ocr_pages:
        warnings.append(
            f"{len(content.ocr_pages)} of {content.page_count} pages had no text layer; their text was "
            "recognised by OCR (Tesseract) and may hold recognition errors"
        )
    if content.ocr_errors:
        warnings.append(f"OCR failed on {len(content.ocr_errors)} page(s): {'; '.join(content.ocr_errors[:3])}")
    ocr_state: OcrState = "off" if options.ocr == "off" else "missing" if ocr is None else "ran"
    image_only, text_warning = _text_warning(content.pages, ocr_state)
    if text_warning:
        warnings.append(text_warning)
    return content, outline, image_only


def _read_text_document(
    data: bytes, fmt: DocumentFormat, options: IndexOptions, progress: Callable[[int], object] | None
) -> PdfContent:
    """A DOCX, HTML, Markdown or text file as pages and an outline (see formats/paginate.py)."""
    document = read_text_document(data, fmt)
    paginated = paginate(document.blocks)
    if len(paginated.pages) > options.max_pages:
        raise TooManyPartsError(FORMAT_NAMES[fmt], len(paginated.pages), options.max_pages)
    if progress is not None:
        progress(len(paginated.pages))
    return PdfContent(
        page_count=len(paginated.pages),
        pages=paginated.pages,
        layouts=None,
        outline=paginated.outline,
        metadata_title=document.title,
        printed=False,
    )


def index_document(
    data: bytes,
    file_name: str,
    options: IndexOptions | None = None,
    llm: LLMClient | None = None,
    progress: Callable[[int], object] | None = None,
    embedder: Embedder | None = None,
    fmt: DocumentFormat | None = None,
    doc_id: str | None = None,
) -> IndexedDocument:
    """Index one document: a PDF, or a DOCX, HTML, Markdown or text file. `fmt` is the format
    the file was accepted as (the gateway's reading of an upload); without it, the file's name,
    else its bytes decide. Raises a services.indexer.errors.DocumentError subclass when the file
    cannot be indexed. `doc_id`: the id to store it under (see index_pdf)."""
    fmt = fmt or sniff_format(data, file_name)
    if fmt is None:
        if not data:
            raise NotAPdfError("the file is empty")
        raise UnsupportedFormatError("binary data that is none of these")
    if fmt is DocumentFormat.PDF:
        return index_pdf(data, file_name, options, llm, progress, embedder, doc_id)
    options = options or IndexOptions()
    started = time.perf_counter()
    content = _read_text_document(data, fmt, options, progress)
    # The document's own headings are its outline; the LLM and windows builders still apply.
    outline = usable_outline(content.outline) if options.builder not in ("windows", "llm") else []
    indexed = _index_content(
        doc_id or content_id(data), content, outline, False, file_name, options, llm, embedder, started, []
    )
    indexed.record.format = fmt
    return indexed


def index_pdf(
    data: bytes,
    file_name: str,
    options: IndexOptions | None = None,
    llm: LLMClient | None = None,
    progress: Callable[[int], object] | None = None,
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
    content, outline, image_only = _read_pdf(data, options, progress, warnings)
    return _index_content(doc_id, content, outline, image_only, file_name, options, llm, embedder, started, warnings)


def _first_tree(
    doc_id: str, content: PdfContent, outline: list[OutlineEntry], image_only: bool, options: IndexOptions,
    llm: LLMClient | None, furniture: frozenset[str], warnings: list[str],
) -> tuple[list[TreeNode], BuilderName]:
    """The tree before it is split and verified, and what built it: the outline when the file
    has one, else the model (when asked for or configured), else the page layout, else windows."""
    pages = content.pages
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
    return nodes, builder


def _index_content(
    doc_id: str,
    content: PdfContent,
    outline: list[OutlineEntry],
    image_only: bool,
    file_name: str,
    options: IndexOptions,
    llm: LLMClient | None,
    embedder: Embedder | None,
    started: float,
    warnings: list[str],
) -> IndexedDocument:
    """Tree, verification, summaries and vectors from the pages: the same for every format."""
    pages = content.pages
    # Running headers and footers are printed things: a converted document has none.
    furniture = find_furniture(pages) if content.printed else frozenset()

    with made_from([doc_id]):  # what a model is asked here quotes this document
        nodes, builder = _first_tree(doc_id, content, outline, image_only, options, llm, furniture, warnings)
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
    if builder is BuilderName.LLM and llm is not None:
        with made_from([doc_id]):
            _llm_summaries(nodes, pages, llm, options.domain, warnings)
    embeddings = embed_document(doc_id, pages, nodes, embedder) if embedder is not None else None

    card = _card(content, furniture, file_name, doc_id)
    elapsed = time.perf_counter() - started
    record = DocumentRecord(
        doc_id=doc_id,
        file_name=Path(file_name).name,
        title=card.display_title() or Path(file_name).stem,
        card=card,
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
        record=record, pages=pages, tree=DocumentTree(doc_id=doc_id, nodes=nodes), embeddings=embeddings,
        analysis=analyse_pages(pages, [(node.title, node.summary) for node in walk_tree(nodes)]).to_bytes(),
        text_layers=content.text_layers,
    )
