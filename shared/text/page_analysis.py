"""What a document's pages are to the navigator, independent of any question: each page's
terms, its sentences' terms and its header's terms as ids into one vocabulary, the page
features read from its lines, and the cross-references its text makes.

The indexer computes it once per tree version and stores it with the document (`to_bytes`);
the navigator builds its per-document index from it (`services/navigator/index.py`) with array
operations, instead of splitting and tokenising every page again on `tree.built` or on a cold
start. A document stored without one, or with one made by other text rules (`fingerprint`),
gets it computed from its pages by `analyse_pages`, the same function, so both ways give the
same index. The indexer analyses the tree's titles and summaries with the pages (`NodeTerms`);
an analysis stored before, or of another tree, has them computed again by the navigator.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from shared.text.cross_references import Reference, find_text_references
from shared.text.lexical import STOPWORDS, sentences_of, terms
from shared.text.term_ids import Ragged, Vocabulary

# Bumped when the stored layout changes; `fingerprint` also changes with the text rules.
FORMAT = 3
# The stored form opens with these bytes, then the header's length (4 bytes, little-endian), the
# JSON header naming each array's dtype, shape and offset, and the arrays' bytes, each 8-aligned.
# Read with one JSON parse and a view per array: a .npz archive parses a header per array, which
# took most of a cold start's reading time over a store of filings.
_MAGIC = b"TRPA"
_ALIGN = 8
# The layout of the tree's term ids stored beside the pages' (`NodeTerms`); an analysis without
# them, or with another layout, still describes its pages and the node terms are computed again.
NODE_TERMS_FORMAT = 1
# Lines of a page read as its header, where running heads and statement titles sit.
HEADER_LINES = 4
# A line ending in a page number after dot leaders or a space ("2 Valves .... 7").
_ENDS_IN_PAGE_NUMBER = re.compile(r"(?:\.{2,}|\s)\d{1,4}$")
_BARE_NUMBER = re.compile(r"^\s*(?:page\s+)?(\d{1,4})\s*$", re.IGNORECASE)
_NUMBER_TOKEN = re.compile(r"^[$(€£]?-?[\d,.]*\d[\d,.]*%?\)?$")
# Text that exercises the tokeniser, the stemmer and the sentence splitter: a change in any of
# them changes the fingerprint, and analyses stored under the old rules are computed again.
_PROBE = (
    "The Company's 2018 capital expenditures were $1,577 million (e.g. Fig. 3.2). Net sales rose "
    "4.1% in Q2 FY2023.\n\nDon't re-index pages: 計算機科学 계약서를 naïve résumé CAFÉ studies running. "
    "Manage-\nment filed its Form 10-\nK for 2019-\n2020."
)


class AnalysisFormatError(ValueError):
    """Stored bytes that are not a page analysis of this format."""


@dataclass(frozen=True, eq=False)
class NodeTerms:
    """The terms of every tree node's title and summary as ids into the analysis's vocabulary,
    nodes in pre-order, numbered after the pages' terms (titles first, then summaries), as the
    navigator's index numbers them when it tokenises the tree itself."""

    titles: Ragged
    summaries: Ragged
    digest: str  # of the (title, summary) pairs analysed (`nodes_digest`)


@dataclass(frozen=True, eq=False)
class PageAnalysis:
    vocabulary: Vocabulary
    pages: Ragged  # each page's terms in text order (`terms(page)`)
    sentences: Ragged  # each sentence's terms (`sentences_of(page)`), the pages' sentences end to end
    sentence_offsets: np.ndarray  # page p (0-based) owns sentences sentence_offsets[p] .. [p + 1]
    headers: Ragged  # terms of each page's first HEADER_LINES lines, in order
    listing: np.ndarray  # share of a page's lines that end in a page number (contents, indexes)
    numeric: np.ndarray  # share of a page's tokens that are numbers (tables)
    printed: np.ndarray  # the page number printed on the page, -1 when none
    references: dict[int, tuple[Reference, ...]]  # the cross-references of each 0-based page making any
    digest: str  # of the page texts analysed (`pages_digest`)
    nodes: NodeTerms | None = None  # the tree's terms, when analysed with the tree

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def node_terms(self, nodes: Sequence[tuple[str, str]]) -> NodeTerms | None:
        """The stored terms of these (title, summary) pairs, in pre-order; None when the
        analysis holds none or those of another tree."""
        if self.nodes is None or len(self.nodes.titles) != len(nodes) or self.nodes.digest != nodes_digest(nodes):
            return None
        return self.nodes

    def page_sentences(self, page: int) -> list[np.ndarray]:
        """The term ids of each sentence of a 0-based page."""
        return [self.sentences.row(s) for s in range(int(self.sentence_offsets[page]), int(self.sentence_offsets[page + 1]))]

    def to_bytes(self) -> bytes:
        """The stored form: arrays only (no pickled objects), read back by `from_bytes`."""
        words = "\n".join(self.vocabulary.words).encode()
        references = [[page, r.kind, r.label] for page, found in sorted(self.references.items()) for r in found]
        described = {"format": FORMAT, "fingerprint": fingerprint(), "pages": self.page_count, "digest": self.digest,
                     "references": references}
        tree: dict[str, np.ndarray] = {}
        if self.nodes is not None:
            described |= {"node_terms": NODE_TERMS_FORMAT, "nodes_digest": self.nodes.digest}
            tree = {"title_ids": self.nodes.titles.ids, "title_offsets": self.nodes.titles.offsets,
                    "summary_ids": self.nodes.summaries.ids, "summary_offsets": self.nodes.summaries.offsets}
        return _pack(described, {
            "words": np.frombuffer(words, dtype=np.uint8),
            "page_ids": self.pages.ids, "page_offsets": self.pages.offsets,
            "sentence_ids": self.sentences.ids, "sentence_row_offsets": self.sentences.offsets,
            "sentence_offsets": self.sentence_offsets,
            "header_ids": self.headers.ids, "header_offsets": self.headers.offsets,
            "listing": self.listing, "numeric": self.numeric, "printed": self.printed, **tree,
        })

    @classmethod
    def from_bytes(cls, data: bytes) -> PageAnalysis:
        """Raises `AnalysisFormatError` for bytes of another format or other text rules."""
        head, arrays = _unpack(data)
        if head.get("format") != FORMAT or head.get("fingerprint") != fingerprint():
            raise AnalysisFormatError(
                f"page analysis of format {head.get('format')} under other text rules; it is computed again"
            )
        words = arrays["words"].tobytes().decode()
        vocabulary = Vocabulary(words.split("\n") if words else [])
        return cls(
            vocabulary=vocabulary,
            pages=Ragged(arrays["page_ids"], arrays["page_offsets"]),
            sentences=Ragged(arrays["sentence_ids"], arrays["sentence_row_offsets"]),
            sentence_offsets=arrays["sentence_offsets"],
            headers=Ragged(arrays["header_ids"], arrays["header_offsets"]),
            listing=arrays["listing"], numeric=arrays["numeric"], printed=arrays["printed"],
            references=_grouped(head.get("references", [])), digest=str(head.get("digest", "")),
            nodes=_stored_node_terms(head, arrays),
        )

    def describes(self, pages: Sequence[str]) -> bool:
        """Whether this is the analysis of exactly these page texts."""
        return self.of_pages(len(pages), pages_digest(pages))

    def of_pages(self, count: int, digest: str) -> bool:
        """Whether this is the analysis of the pages of this count and `pages_digest`, as one
        computed when they were stored says (without reading them)."""
        return bool(digest) and self.page_count == count and self.digest == digest


def _pack(head: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """`head` and `arrays` in the stored form (`_MAGIC`)."""
    table, chunks, offset = [], [], 0
    for name, array in arrays.items():
        raw = np.ascontiguousarray(array).tobytes()
        table.append([name, array.dtype.str, list(array.shape), offset])
        padding = -len(raw) % _ALIGN
        chunks.append(raw + b"\0" * padding)
        offset += len(raw) + padding
    header = json.dumps({**head, "arrays": table}).encode()
    header += b" " * (-(len(_MAGIC) + 4 + len(header)) % _ALIGN)
    return b"".join([_MAGIC, struct.pack("<I", len(header)), header, *chunks])


def _unpack(data: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and the arrays of the stored form; `AnalysisFormatError` for anything else
    (an older format, cut or altered bytes: never an object array, never a read past the end)."""
    if not data.startswith(_MAGIC):
        raise AnalysisFormatError("not a page analysis of this format (stored before it); it is computed again")
    try:
        (length,) = struct.unpack_from("<I", data, len(_MAGIC))
        start = len(_MAGIC) + 4
        head = json.loads(data[start : start + length])
        # One writable copy of the arrays' bytes, which the arrays view.
        body = bytearray(data[start + length :])
        arrays = {}
        for name, dtype_text, shape, offset in head.pop("arrays"):
            dtype = np.dtype(dtype_text)
            if dtype.kind not in "biuf" or any(not isinstance(n, int) or n < 0 for n in shape):
                raise ValueError(f"array {name!r} of dtype {dtype_text!r}, shape {shape!r}")
            count = int(np.prod(shape, dtype=np.int64))
            arrays[str(name)] = np.frombuffer(body, dtype=dtype, count=count, offset=int(offset)).reshape(shape)
    except (ValueError, TypeError, KeyError, struct.error, AttributeError) as exc:
        raise AnalysisFormatError(f"not a page analysis: {exc}") from exc
    if not isinstance(head, dict):
        raise AnalysisFormatError("not a page analysis: its header is not an object")
    return head, arrays


def _stored_node_terms(head: dict[str, object], arrays: dict[str, np.ndarray]) -> NodeTerms | None:
    if head.get("node_terms") != NODE_TERMS_FORMAT or "title_ids" not in arrays:
        return None
    return NodeTerms(
        titles=Ragged(arrays["title_ids"], arrays["title_offsets"]),
        summaries=Ragged(arrays["summary_ids"], arrays["summary_offsets"]), digest=str(head.get("nodes_digest", "")),
    )


def _grouped(rows: list[list[object]]) -> dict[int, tuple[Reference, ...]]:
    by_page: dict[int, list[Reference]] = {}
    for page, kind, label in rows:
        by_page.setdefault(int(str(page)), []).append(Reference(str(kind), str(label)))
    return {page: tuple(found) for page, found in by_page.items()}


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _listing_line(line: str) -> bool:
    """A line of words that ends in a page number (an entry of a contents page or an index)."""
    return bool(_ENDS_IN_PAGE_NUMBER.search(line)) and any(c.isalpha() for c in line)


def _printed_number(lines: list[str]) -> int | None:
    for line in (lines[-1:] + lines[:1]) if lines else []:
        match = _BARE_NUMBER.match(line)
        if match:
            return int(match.group(1))
    return None


def analyse_pages(pages: Sequence[str], nodes: Sequence[tuple[str, str]] | None = None) -> PageAnalysis:
    """The analysis of `pages`; with `nodes` (every tree node's title and summary, in
    pre-order) their terms too (`NodeTerms`)."""
    vocabulary = Vocabulary()
    ids = vocabulary.ids_of
    page_rows: list[list[int]] = []
    sentence_rows: list[list[int]] = []
    header_rows: list[list[int]] = []
    sentence_offsets = [0]
    listing = np.zeros(len(pages))
    numeric = np.zeros(len(pages))
    printed = np.full(len(pages), -1, dtype=np.int32)
    references: dict[int, tuple[Reference, ...]] = {}
    for number, text in enumerate(pages):
        found_references = find_text_references(text)
        if found_references:
            references[number] = tuple(found_references)
        page_rows.append(ids(terms(text)))
        sentences = sentences_of(text)
        sentence_rows.extend(ids(terms(s)) for s in sentences)
        sentence_offsets.append(sentence_offsets[-1] + len(sentences))
        lines = _lines(text)
        header_rows.append(ids(terms(" ".join(lines[:HEADER_LINES]))))
        if lines:
            listing[number] = sum(1 for line in lines if _listing_line(line)) / len(lines)
        tokens = text.split()
        if tokens:
            numeric[number] = sum(1 for t in tokens if _NUMBER_TOKEN.match(t)) / len(tokens)
        found = _printed_number(lines)
        if found is not None:
            printed[number] = found
    node_terms = None
    if nodes is not None:
        titles = Ragged.of([ids(terms(title)) for title, _ in nodes])
        node_terms = NodeTerms(titles, Ragged.of([ids(terms(summary)) for _, summary in nodes]), nodes_digest(nodes))
    return PageAnalysis(
        vocabulary=vocabulary, pages=Ragged.of(page_rows), sentences=Ragged.of(sentence_rows),
        sentence_offsets=np.asarray(sentence_offsets, dtype=np.int64), headers=Ragged.of(header_rows),
        listing=listing, numeric=numeric, printed=printed, references=references, digest=pages_digest(pages),
        nodes=node_terms,
    )


def nodes_digest(nodes: Sequence[tuple[str, str]]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for title, summary in nodes:
        digest.update(title.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
        digest.update(summary.encode("utf-8", "surrogatepass"))
        digest.update(b"\x01")
    return digest.hexdigest()


def pages_digest(pages: Sequence[str]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for text in pages:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def fingerprint() -> str:
    """Names the text rules an analysis was made under (`FORMAT`, the stop words, the header
    depth, and what the tokeniser and sentence splitter make of a probe text)."""
    if not _FINGERPRINT:
        probe = [terms(_PROBE), [terms(s) for s in sentences_of(_PROBE)], sorted(STOPWORDS), HEADER_LINES, FORMAT]
        _FINGERPRINT.append(hashlib.sha256(json.dumps(probe, ensure_ascii=False).encode()).hexdigest()[:16])
    return _FINGERPRINT[0]


_FINGERPRINT: list[str] = []
