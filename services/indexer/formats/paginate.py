"""Pages for documents that have none: how a DOCX, HTML, Markdown or text file is cited.

A page is what a citation points at, so it should hold about what a printed page holds: each
heading of the document's two highest levels starts a new page (as chapters and sections do in
print), and a page is closed at the paragraph that would take it past `PAGE_CHARS` characters.
Deeper headings flow with the text; a paragraph's notes (DOCX footnotes and endnotes) follow it
on its page. Page numbers are then 1-based like a PDF's, and the page store, the page-cited
answers and the verifier work on them unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from services.indexer.extract import OutlineEntry
from services.indexer.formats.blocks import Block

# About one printed page of body text (A4 or Letter, 11 pt).
PAGE_CHARS = 3_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(slots=True)
class Paginated:
    pages: list[str]
    # Every heading with the page it is on: the tree comes from these as from a PDF's bookmarks.
    outline: list[OutlineEntry] = field(default_factory=list)


def _pieces(text: str, limit: int) -> list[str]:
    """A paragraph longer than a page, cut at sentence ends (or spaces) into page-sized pieces."""
    text = text.strip()
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut].rstrip())
            sentence = sentence[cut:].lstrip()
        if current and len(current) + 1 + len(sentence) > limit:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def _notes_by_piece(pieces: list[str], notes: tuple[str, ...]) -> list[list[str]]:
    """Each note after the piece holding its mark ("[1]"), else after the last piece."""
    placed: list[list[str]] = [[] for _ in pieces]
    for note in notes:
        mark = note.split(" ", 1)[0]
        at = next((k for k, piece in enumerate(pieces) if mark in piece), len(pieces) - 1)
        placed[at].append(note)
    return placed


def paginate(blocks: list[Block], page_chars: int = PAGE_CHARS) -> Paginated:
    levels = sorted({b.level for b in blocks if b.level > 0})
    breaking = set(levels[:2])
    pages: list[list[str]] = [[]]
    body_chars = 0  # body text on the current page: a page of headings only is never closed
    size = 0
    outline: list[OutlineEntry] = []
    trailing = 0  # headings at the end of the current page, not yet followed by their text

    def new_page() -> None:
        nonlocal body_chars, size, trailing
        # A heading goes with its text: the ones closing the page move to the next.
        moved = pages[-1][len(pages[-1]) - trailing :] if trailing else []
        if moved:
            del pages[-1][-trailing:]
            for entry in outline[-trailing:]:
                entry.page = len(pages) + 1
            outline[-trailing].top_fraction = 0.0
        pages.append(moved)
        size = sum(len(line) + 1 for line in moved)
        body_chars = trailing = 0

    for block in blocks:
        if block.level > 0:
            if block.level in breaking and body_chars:
                new_page()
            outline.append(OutlineEntry(level=block.level, title=block.text, page=len(pages),
                                        top_fraction=0.0 if not pages[-1] else None))
            pages[-1].append(block.text)
            size += len(block.text) + 1
            trailing += 1
            continue
        notes_chars = sum(len(note) + 1 for note in block.notes)
        pieces = _pieces(block.text, max(page_chars // 2, page_chars - notes_chars))
        for piece, notes in zip(pieces, _notes_by_piece(pieces, block.notes), strict=True):
            lines = [piece, *notes]  # a note stays on the page of its mark
            length = sum(len(line) + 1 for line in lines) - 1
            if body_chars and size + length > page_chars:
                new_page()
            pages[-1].extend(lines)
            size += length + 1
            body_chars += length
            trailing = 0
    return Paginated(pages=["\n".join(lines) for lines in pages if lines], outline=outline)
